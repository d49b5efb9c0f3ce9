"""The native consumer loop (consumer.c) behind :class:`kperf.drivers.loop.ConsumerLoop`: the Python consumer
loop's reads, verification (the sequence ledger) and end-to-end latency in C, batch for batch, with the client
settings its caller built for confluent-kafka.

A call reads until the window boundary in C (ctypes releases the GIL); its counts are read back after each.
"""

from __future__ import annotations

import ctypes
import math
import weakref
from collections.abc import Mapping
from typing import Any

from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.loop import BATCH, POLL_S, ConsumerLoop
from kperf.drivers.native import library
from kperf.drivers.native.recorder import NativeRecorder
from kperf.drivers.specs import ConsumerSpec
from kperf.errors import KperfError
from kperf.latency_bins import Bins

FAILED = -1  # kp_consumer_read's and kp_consumer_close's failure


class Consumed(ctypes.Structure):
    """loops.h's kp_consumed: the loop's counts, read in place (NaN: not yet)."""

    _fields_ = [("records", ctypes.c_uint64), ("bytes", ctypes.c_uint64), ("fetches", ctypes.c_uint64),
                ("joined", ctypes.c_double), ("assigned", ctypes.c_double), ("first", ctypes.c_double),
                ("last", ctypes.c_double), ("live", ctypes.c_double)]


class NativeConsumerLoop(ConsumerLoop):
    name = "native"

    def __init__(self, spec: ConsumerSpec, config: Mapping[str, Any]) -> None:
        self._lib = lib = library.load()
        conf = library.client_conf(lib, config, "consumer")
        errstr = ctypes.create_string_buffer(library.ERRSTR)
        handle = lib.kp_consumer_new(conf, spec.topic.encode(), int(spec.end_to_end), BATCH, POLL_S, errstr,
                                     library.ERRSTR)
        if not handle:
            raise KperfError(f"cannot make a consumer of {spec.topic}: {errstr.value.decode(errors='replace')}")
        self._handle: int = handle
        weakref.finalize(self, lib.kp_consumer_free, handle)  # the counts outlive close(): freed with this object
        self._consumed = Consumed.from_address(lib.kp_consumer_consumed(handle))
        self._e2e = NativeRecorder(lib, lib.kp_consumer_recorder(handle))

    def subscribe(self) -> None:
        if self._lib.kp_consumer_subscribe(self._handle):
            raise library.failure(self._lib, self._handle)

    def read(self, until: float, stop_at: float) -> bool:
        status = self._lib.kp_consumer_read(self._handle, until, stop_at)
        self._note()
        if status == FAILED:
            raise library.failure(self._lib, self._handle)
        return bool(status)

    def _note(self) -> None:
        """The C's counts as the interface's attributes."""
        consumed = self._consumed
        self.records, self.bytes, self.fetches = consumed.records, consumed.bytes, consumed.fetches
        self.joined, self.assigned = _time(consumed.joined), _time(consumed.assigned)
        self.first, self.last, self.live = _time(consumed.first), _time(consumed.last), _time(consumed.live)

    def window_bins(self) -> Bins:
        return self._e2e.window_bins()

    def errors(self) -> dict[str, int]:
        return library.errors(self._lib, self._handle)

    def ledger(self) -> SequenceLedger:
        return read_ledger(self._lib, self._lib.kp_consumer_ledger(self._handle))

    def histogram(self) -> bytes:
        return self._e2e.encode()

    def close(self) -> None:
        failed = self._lib.kp_consumer_close(self._handle) == FAILED
        self._note()
        if failed:
            raise library.failure(self._lib, self._handle)


def _time(seconds: float) -> float | None:
    return None if math.isnan(seconds) else seconds


def read_ledger(lib: ctypes.CDLL, ledger: int) -> SequenceLedger:
    """A C ledger (ledger.c) as the Python one: its bits copied, laid out alike."""
    producer, size = ctypes.c_uint32(), ctypes.c_size_t()
    seen = {}
    for index in range(lib.kp_ledger_producers(ledger)):
        bits = lib.kp_ledger_bits(ledger, index, ctypes.byref(producer), ctypes.byref(size))
        seen[producer.value] = bytearray(ctypes.string_at(bits, size.value) if size.value else b"")
    return SequenceLedger(seen=seen, duplicated=lib.kp_ledger_duplicated(ledger))
