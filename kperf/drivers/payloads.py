"""What producers send: payload bytes of a chosen kind, and an identity header on every record.

Every record carries a ``kperf`` header: producer id, sequence number and the
intended send time (wall clock, ns). Consumers use it to verify that nothing
was lost or duplicated and to measure end-to-end latency; it is a header, not
part of the payload, so payload sizes and partitioning stay as asked. Like
the stock tool, kperf counts payload bytes only. Consumers read the headers of
a whole batch at once (:func:`identities`): one numpy parse per batch, not a
Python object per record.
"""

from __future__ import annotations

import json
import os
import random
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from kperf.errors import KperfError

HEADER = "kperf"
_IDENTITY = struct.Struct(">IQQ")  # producer id, sequence number, intended send time (ns since epoch)
KINDS = ("random", "text")
POOL_BYTES = 16 * 2**20  # distinct bytes to cut payloads from: larger than any batch a codec sees at once
SEED = 20141201  # fixed, so "text" payloads (and their compression ratio) are the same every run

WORDS = (
    "kafka broker partition offset replica leader follower producer consumer topic batch linger "
    "commit fetch segment index cluster controller quorum latency throughput record header key value "
    "order payment user session click view cart checkout shipped delivered refund region eu us apac"
).split()


# The same fields as numpy reads them from the joined headers of a batch.
IDENTITY = np.dtype([("producer", ">u4"), ("sequence", ">u8"), ("intended_ns", ">u8")])
assert IDENTITY.itemsize == _IDENTITY.size
T = TypeVar("T")
Headers = list[tuple[str, str | bytes | None]]  # confluent-kafka's header list


def identity_header(producer: int, sequence: int, intended_ns: int) -> Headers:
    return [(HEADER, _IDENTITY.pack(producer, sequence, intended_ns))]


def _identity_value(headers: Headers | None) -> bytes | str | None:
    """The value of the first ``kperf`` header, or b"" when there is none."""
    for name, value in headers or ():
        if name == HEADER:
            return value
    return b""


def identities(batch: Iterable[Headers | None]) -> np.ndarray:
    """The identities kperf producers put on a batch of records (given their headers), as an array of
    :data:`IDENTITY`, in the records' order; records from elsewhere (no ``kperf`` header, or one of
    another size) are left out.

    This runs on every record a consumer reads, so the common case (the ``kperf`` header first) costs
    one list item; the values are joined and parsed by numpy in one go.
    """
    values = [h[0][1] if h and h[0][0] == HEADER else _identity_value(h) for h in batch]
    try:
        if set(map(len, values)) <= {0, IDENTITY.itemsize}:  # type: ignore[arg-type]
            return np.frombuffer(b"".join(values), dtype=IDENTITY)  # type: ignore[arg-type]
    except TypeError:  # a None or str value: only those of the right size and type are identities
        pass
    kept = [v if isinstance(v, bytes) and len(v) == IDENTITY.itemsize else b"" for v in values]
    return np.frombuffer(b"".join(kept), dtype=IDENTITY)


def _text_pool(size: int) -> bytes:
    """JSON-like event lines from a fixed seed: compressible the way application data is."""
    rng = random.Random(SEED)
    lines, total = [], 0
    while total < size:
        event = {
            "id": rng.randrange(10**9),
            "user": f"user-{rng.randrange(5000)}",
            "event": rng.choice(WORDS),
            "amount": round(rng.uniform(1, 500), 2),
            "note": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 15))),
        }
        line = json.dumps(event).encode() + b"\n"
        lines.append(line)
        total += len(line)
    return b"".join(lines)[:size]


def check(kind: str, record_size: int, payload_file: Path | None = None) -> list[bytes]:
    """Refuse an unknown kind, a size below 1 byte or an unreadable or empty payload file; the file's lines."""
    if payload_file is None:
        if kind not in KINDS:
            raise KperfError(f"unknown payload kind {kind!r}: choose {', '.join(KINDS)} or a payload file")
        if record_size < 1:
            raise KperfError(f"record size must be at least 1 byte, got {record_size}")
        return []
    try:
        lines = [ln for ln in Path(payload_file).read_bytes().split(b"\n") if ln]
    except OSError as exc:
        raise KperfError(f"cannot read payload file {payload_file}: {exc.strerror}") from None
    if not lines:
        raise KperfError(f"payload file {payload_file} has no non-empty line")
    return lines


@dataclass(frozen=True)
class Schedule:
    """Every payload a :class:`Payloads` will give, in order: either cut from ``pool``, ``sizes`` taken in turn
    (each payload starts where the last ended, wrapping at ``len(pool) - size``), or ``lines[order[i]]`` in turn."""

    pool: bytes
    sizes: tuple[int, ...]
    lines: tuple[bytes, ...]
    order: tuple[int, ...]


class Payloads:
    """An endless source of payloads of one kind, cut from a pool so consecutive records differ.

    * ``random``: incompressible bytes (what codecs cannot shrink);
    * ``text``: JSON-like lines (what they can), the same on every run;
    * a payload file: its lines, one at random per record, like the stock
      tool's ``--payload-file`` (record size is then the lines' sizes).
    """

    def __init__(self, kind: str, record_size: int, payload_file: Path | None = None, seed: int = SEED,
                 sizes: Sequence[tuple[int, float]] = ()) -> None:
        self._lines = check(kind, record_size, payload_file)
        self.record_size = record_size
        self._rng = random.Random(seed)
        # A size distribution ((bytes, weight) pairs): sizes drawn once, then taken in turn (one index per record).
        self._sizes = draws([b for b, _ in sizes], [w for _, w in sizes], self._rng) if sizes else [record_size]
        self._turn = 0
        # A payload file's lines: drawn once like the sizes (uniformly, as the stock tool does), then taken in turn.
        self._order = draws(range(len(self._lines)), [1.0] * len(self._lines), self._rng) if self._lines else []
        if self._lines:
            return
        pool_size = max(POOL_BYTES, 4 * max(self._sizes))
        self._pool = os.urandom(pool_size) if kind == "random" else _text_pool(pool_size)
        self._offset = 0

    def schedule(self) -> Schedule:
        """What :meth:`next` cuts its payloads from, for a loop that sends them without Python (the native loop
        replays it record for record): the pool and the sizes taken in turn, or the lines and the order they are
        taken in."""
        if self._lines:
            return Schedule(b"", (), tuple(self._lines), tuple(self._order))
        return Schedule(self._pool, tuple(self._sizes), (), ())

    def next(self) -> bytes:
        if self._lines:
            line = self._lines[self._order[self._turn]]
            self._turn = (self._turn + 1) % len(self._order)
            return line
        size = self._sizes[self._turn]
        self._turn = (self._turn + 1) % len(self._sizes)
        start = self._offset
        self._offset = (start + size) % (len(self._pool) - size)
        return self._pool[start : start + size]


DRAWS = 65_536  # sizes and keys are drawn this many times once, then reused in turn: no random draw per record


def draws(values: Sequence[T], weights: Sequence[float], rng: random.Random) -> list[T]:
    """``DRAWS`` values drawn by ``weights`` (the same every run: ``rng`` is seeded)."""
    return rng.choices(list(values), weights=list(weights), k=DRAWS)


class Keys:
    """Record keys: none, or ``count`` distinct keys chosen uniformly or, with ``zipf_s`` > 0, by Zipf's law
    (key k with probability proportional to 1 / k^s: a few hot keys, hence hot partitions)."""

    def __init__(self, count: int = 0, zipf_s: float = 0.0, seed: int = SEED) -> None:
        if count < 0 or zipf_s < 0:
            raise KperfError(f"keys: count and Zipf exponent must be 0 or more, got {count} and {zipf_s}")
        ranks = range(1, count + 1)
        self._keys: list[bytes | None] = (
            draws([b"key-%d" % k for k in ranks], [k ** -zipf_s for k in ranks], random.Random(seed)) if count else [None]
        )
        self._turn = 0

    def schedule(self) -> tuple[bytes | None, ...]:
        """The keys :meth:`next` gives, taken in turn (None: no key)."""
        return tuple(self._keys)

    def next(self) -> bytes | None:
        key = self._keys[self._turn]
        self._turn = (self._turn + 1) % len(self._keys)
        return key
