"""Which records arrived, by producer id and sequence number: one bit each, in bounded memory, duplicates counted.

Both consumer loops keep one (the native loop fills its bits in C, laid out the same: bit ``i % 8`` of byte
``i // 8`` is sequence ``i``), and the ledgers of a group's consumers merge into the unit's
:class:`~kperf.results.Verification`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kperf.results import Verification

Ranges = Sequence[tuple[int, int]]  # sequence numbers, each range [start, end)


def _mask(ranges: Ranges) -> int:
    """``ranges`` as a bit set (built in numpy: many ranges over millions of sequences)."""
    if not ranges:
        return 0
    bits = np.zeros(max(end for _, end in ranges), dtype=bool)
    for start, end in ranges:
        bits[start:end] = True
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


@dataclass
class SequenceLedger:
    """Which sequence numbers of each producer arrived: one bit each, duplicates counted."""

    seen: dict[int, bytearray] = field(default_factory=dict)
    duplicated: int = 0

    def add(self, producer: int, sequence: int) -> None:
        self.add_many(np.array([producer]), np.array([sequence]))

    def add_many(self, producers: np.ndarray, sequences: np.ndarray) -> None:
        """Record a batch of (producer, sequence) pairs: sorted and set in bulk, duplicates within the batch
        and with earlier batches counted alike."""
        if not len(sequences):
            return
        producers, sequences = producers.astype(np.int64), sequences.astype(np.int64)
        one = producers.min() == producers.max()
        for producer in [int(producers[0])] if one else np.unique(producers).tolist():
            self._add_sequences(producer, sequences if one else sequences[producers == producer])

    def _add_sequences(self, producer: int, sequences: np.ndarray) -> None:
        ordered = np.sort(sequences)  # (np.unique is several times slower)
        first = np.empty(len(ordered), dtype=bool)
        first[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        distinct = ordered[first]
        self.duplicated += len(sequences) - len(distinct)
        index, masks = distinct >> 3, np.left_shift(1, distinct & 7).astype(np.uint8)
        bits = self.seen.setdefault(producer, bytearray())
        if (need := int(index[-1]) + 1) > len(bits):
            bits.extend(bytes(max(need - len(bits), len(bits))))  # at least doubled: amortized growth
        starts = np.flatnonzero(np.diff(index, prepend=-1))  # the first sequence of each byte touched
        touched, masks = index[starts], np.bitwise_or.reduceat(masks, starts)
        view = np.frombuffer(bits, dtype=np.uint8)  # writable: the bytearray's own memory
        before = view[touched]
        self.duplicated += int(np.bitwise_count(before & masks).sum())
        view[touched] = before | masks

    def merge(self, other: SequenceLedger) -> None:
        """Add another consumer's ledger: a sequence both saw is a duplicate."""
        self.duplicated += other.duplicated
        for producer, theirs in other.seen.items():
            mine, new = self.bits(producer), int.from_bytes(theirs, "little")
            self.duplicated += (mine & new).bit_count()
            merged = mine | new
            self.seen[producer] = bytearray(merged.to_bytes((merged.bit_length() + 7) // 8, "little"))

    def verification(self, expected: Mapping[int, int] | None = None,
                     excluded: Mapping[int, Ranges] | None = None) -> Verification:
        """Compare with ``expected`` records per producer id (default: up to each one's highest sequence), less the
        sequences ``excluded`` by producer (records that must not arrive: they are not expected, nor missing)."""
        if expected is None:
            expected = self.highest()
        wanted = {p: ((1 << n) - 1) & ~_mask((excluded or {}).get(p, ())) for p, n in expected.items()}
        missing = sum(mask.bit_count() - (self.bits(p) & mask).bit_count() for p, mask in wanted.items())
        return Verification(expected=sum(m.bit_count() for m in wanted.values()), missing=missing,
                            duplicated=self.duplicated)

    def highest(self) -> dict[int, int]:
        """Each producer's sequences up to its highest one seen, as a count."""
        return {p: self.bits(p).bit_length() for p in self.seen}

    def seen_in(self, producer: int, ranges: Ranges) -> int:
        """How many sequences of ``producer`` within ``ranges`` arrived."""
        return (self.bits(producer) & _mask(ranges)).bit_count()

    def bits(self, producer: int) -> int:
        """The sequence numbers seen of ``producer`` as a bit set (bit i: sequence i arrived)."""
        return int.from_bytes(self.seen.get(producer, b""), "little")
