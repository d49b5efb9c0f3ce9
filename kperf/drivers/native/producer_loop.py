"""The native producer loop (producer.c) behind :class:`kperf.drivers.loop.ProducerLoop`: the Python producer
loop's sends, pacing and acknowledgements in C, record for record, with the same client settings
(:func:`kperf.kafka.clients.client_config`), payloads and keys (their schedules, replayed in C) and counts.

A call runs a whole window in C (ctypes releases the GIL): Python is reached once per window, not per record.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Sequence

import numpy as np

from kperf.drivers import transactions
from kperf.drivers.loop import BEHIND, BOUNDARY, DONE, FULL, ProducerLoop, TurnAcks
from kperf.drivers.native import library
from kperf.drivers.native.recorder import NativeRecorder
from kperf.drivers.payloads import Keys, Payloads
from kperf.drivers.specs import ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import clients
from kperf.latency_bins import Bins

FAILED = -1  # kp_producer_run's statuses (loops.h), as the loop's
STATUSES = {0: BOUNDARY, 1: DONE, 2: BEHIND, 3: FULL}
ACK = np.dtype([("sequence", "<u8"), ("partition", "<i8"), ("acked", "<f8"), ("intended", "<f8")])  # loops.h's kp_ack


class NativeProducerLoop(ProducerLoop):
    name = "native"

    def __init__(self, spec: ProducerSpec, producer_id: int) -> None:
        self._lib = lib = library.load()
        config = transactions.settings(spec.config, spec.topic, producer_id) if spec.transactions else spec.config
        conf = library.client_conf(lib, clients.client_config(spec.bootstrap, config), "producer")
        errstr = ctypes.create_string_buffer(library.ERRSTR)
        handle = lib.kp_producer_new(conf, spec.topic.encode(), producer_id, spec.rate, spec.give_up_behind_s,
                                     int(spec.record_latency), int(spec.record_series), int(spec.track_acks),
                                     errstr, library.ERRSTR)
        if not handle:
            raise KperfError(f"cannot make a producer for {spec.topic}: {errstr.value.decode(errors='replace')}")
        self._handle: int = handle
        weakref.finalize(self, lib.kp_producer_free, handle)  # the counts outlive close(): freed with this object
        self._schedule(Payloads(spec.payload, spec.record_size, spec.payload_file, sizes=spec.sizes),
                       Keys(spec.keys, spec.key_zipf_s, seed=producer_id))
        self._ack = NativeRecorder(lib, lib.kp_producer_recorder(handle, 0))
        self._intended = NativeRecorder(lib, lib.kp_producer_recorder(handle, 1))
        self._windowed = self._intended if spec.rate > 0 else self._ack  # the series' latency: see producer.c
        self._transactional = (rule := spec.transactions) is not None
        if rule is not None and lib.kp_producer_transactions(handle, rule.records, rule.ms, rule.abort,
                                                             transactions.TIMEOUT_S):
            raise library.failure(lib, handle)

    def _schedule(self, payloads: Payloads, keys: Keys) -> None:
        """Hand the payloads and keys the Python loop would send, in its order, to the C (which copies them)."""
        lib, handle, schedule = self._lib, self._handle, payloads.schedule()
        if schedule.lines:
            data, ends = _joined(schedule.lines)
            order = np.asarray(schedule.order, dtype=np.uint32)
            failed = lib.kp_producer_lines(handle, data, ends.ctypes.data, len(ends), order.ctypes.data, len(order))
        else:
            sizes = np.asarray(schedule.sizes, dtype=np.uint64)
            failed = lib.kp_producer_pool(handle, schedule.pool, len(schedule.pool), sizes.ctypes.data, len(sizes))
        turns = [key for key in keys.schedule() if key is not None]  # none at all: records have no key
        if turns and not failed:
            distinct = list(dict.fromkeys(turns))
            index = {key: i for i, key in enumerate(distinct)}
            data, ends = _joined(distinct)
            order = np.fromiter((index[key] for key in turns), dtype=np.uint32, count=len(turns))
            failed = lib.kp_producer_keys(handle, data, ends.ctypes.data, len(ends), order.ctypes.data, len(order))
        if failed:
            raise MemoryError("no memory for the producer's payloads and keys")

    def warm_up(self, records: int, until: float) -> bool:
        status = self._lib.kp_producer_warm_up(self._handle, records, until)
        self.warmed = self._lib.kp_producer_warmed(self._handle)
        if status == FAILED:
            raise library.failure(self._lib, self._handle)
        return STATUSES[status] == DONE

    def flush(self, timeout_s: float) -> int:
        outstanding: int = self._lib.kp_producer_flush(self._handle, timeout_s)
        if outstanding < 0:
            raise library.failure(self._lib, self._handle)
        return outstanding

    def start(self, started: float) -> None:
        if self._lib.kp_producer_start(self._handle, started):
            raise library.failure(self._lib, self._handle)

    def run(self, until: float, deadline: float, total: float) -> str:
        status = self._lib.kp_producer_run(self._handle, until, deadline, total)
        self.sent = self._lib.kp_producer_sent(self._handle)
        if status == FAILED:
            raise library.failure(self._lib, self._handle)
        return STATUSES[status]

    def counts(self) -> tuple[int, int, int]:
        counts = (ctypes.c_uint64 * 3)()
        self._lib.kp_producer_counts(self._handle, counts)
        return counts[0], counts[1], counts[2]

    def window_bins(self) -> Bins:
        return self._windowed.window_bins()

    def errors(self) -> dict[str, int]:
        return library.errors(self._lib, self._handle)

    def histograms(self) -> tuple[bytes, bytes]:
        return self._ack.encode(), self._intended.encode()

    def acks(self) -> TurnAcks:
        first = ctypes.c_void_p()
        count = self._lib.kp_producer_acks(self._handle, ctypes.byref(first))
        if not count:
            return ()
        raw = (ctypes.c_char * (count * ACK.itemsize)).from_address(first.value or 0)
        return tuple(map(tuple, np.frombuffer(raw, dtype=ACK).tolist()))

    def transactions(self) -> transactions.Tally | None:
        if not self._transactional:
            return None
        counts, commit_s = (ctypes.c_uint64 * 3)(), ctypes.c_double()
        self._lib.kp_producer_transactions_tally(self._handle, counts, ctypes.byref(commit_s))
        return transactions.Tally(counts[0], counts[1], counts[2], commit_s.value)

    def close(self) -> None:
        self._lib.kp_producer_close(self._handle)


def _joined(values: Sequence[bytes]) -> tuple[bytes, np.ndarray]:
    """Byte strings as the C takes them: joined, and where each ends."""
    return b"".join(values), np.cumsum([len(v) for v in values], dtype=np.uint64)
