"""What a producer or consumer process is asked to do (picklable: specs go to load processes and Dask workers),
and the checks that refuse bad input before any load starts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kperf.drivers import loops, payloads
from kperf.drivers.payloads import Keys
from kperf.errors import KperfError
from kperf.kafka import clients, share_groups
from kperf.load import JOIN_TIMEOUT_S, WINDOW_S, Sharing, Transactions, check_join_timeout
from kperf.series_building import check_window

TRANSACTION_TIMEOUT_MS = 60_000  # librdkafka's default transaction.timeout.ms


@dataclass(frozen=True)
class ProducerSpec:
    """What to send, how fast and with which client settings (picklable: it goes to worker processes)."""

    bootstrap: str
    topic: str
    record_size: int
    records: int | None = None  # stop after this many measured records ...
    duration_s: float | None = None  # ... or after this long
    rate: float = -1  # records/s over all producers; -1: as fast as possible
    payload: str = "random"
    payload_file: Path | None = None
    config: Mapping[str, Any] = field(default_factory=dict)  # librdkafka settings: batch.size, acks, ...
    producers: int = 1
    warmup_records: int = 0  # per producer, sent before measuring
    record_latency: bool = True
    track_acks: bool = False  # keep (sequence, partition, ack time) of every acknowledged record: what a fault may lose
    window_s: float = WINDOW_S  # of the time series
    record_series: bool = True  # False: no time series (to measure what it costs)
    sizes: tuple[tuple[int, float], ...] = ()  # a record size distribution, (bytes, weight); record_size: the largest
    keys: int = 0  # distinct record keys; 0: no key (librdkafka then spreads records over partitions)
    key_zipf_s: float = 0.0  # key skew: Zipf's exponent; 0: uniform
    give_up_behind_s: float = math.inf  # paced: stop once a record is this late, its unsent records counted as GAVE_UP
    loop: str = "auto"  # the hot loop (kperf.drivers.loops): native where built, else python
    after_groups: tuple[tuple[str, int], ...] = ()  # (group, members) reading as it sends: its clock starts once each
    # formed with all its members ...
    join_timeout_s: float = JOIN_TIMEOUT_S  # ... within this
    transactions: Transactions | None = None  # transactional: how its transactions end (kperf.drivers.transactions)
    progress_s: float = 0.0  # a progress line on stderr this often (kperf.drivers.progress); 0: none
    disk_folder: str = ""  # the local brokers' data: the run fails once it has too little free (kperf.drivers.disk_room)

    def check(self, librdkafka: bool = True) -> None:
        """Refuse bad input before any load starts; ``librdkafka``: also the client settings
        (not for the Java tools, whose settings are the Java client's and which they check themselves)."""
        if (self.records is None) == (self.duration_s is None):
            raise KperfError("give either a record count or a duration, not both or neither")
        if self.records is not None and self.records < 1:
            raise KperfError(f"records must be at least 1, got {self.records}")
        if self.duration_s is not None and self.duration_s <= 0:
            raise KperfError(f"duration must be positive, got {self.duration_s}")
        if self.rate == 0 or self.rate < -1:
            raise KperfError(f"target rate must be positive records/s or -1 (unthrottled), got {self.rate}")
        if self.producers < 1:
            raise KperfError(f"producers must be at least 1, got {self.producers}")
        if not self.give_up_behind_s > 0:
            raise KperfError(f"give_up_behind_s must be positive, got {self.give_up_behind_s}")
        if self.warmup_records < 0:
            raise KperfError(f"warm-up records must be 0 or more, got {self.warmup_records}")
        payloads.check(self.payload, self.record_size, self.payload_file)
        if self.sizes and (self.payload_file is not None or any(b < 1 or b > self.record_size or w <= 0 for b, w in self.sizes)):
            raise KperfError("a size distribution needs sizes of 1 to record_size bytes with positive weights, and no payload file")
        Keys(self.keys, self.key_zipf_s)  # refuses a negative count or exponent
        check_window(self.window_s, self.duration_s, self.records, self.rate)
        if self.transactions is not None:
            self.transactions.check()
            if "transactional.id" in self.config:
                raise KperfError("leave transactional.id out: kperf gives each transactional producer its own")
            if str(self.config.get("enable.idempotence", "true")).lower() == "false":
                raise KperfError("a transactional producer is idempotent: leave enable.idempotence=false out")
            limit = float(self.config.get("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS))
            if self.transactions.ms >= limit:
                raise KperfError(f"a transaction of {self.transactions.ms:g} ms would outlast the producer's "
                                 f"transaction.timeout.ms ({limit:g}): the coordinator would abort it")
        if librdkafka:
            clients.check_config(self.config, role="producer")
            loops.check_loop(self.loop)

    def share(self, index: int) -> ProducerSpec:
        """This spec for producer ``index`` of ``producers``: its part of the records and of the rate."""
        records = None
        if self.records is not None:
            records = self.records // self.producers + (1 if index < self.records % self.producers else 0)
        rate = self.rate / self.producers if self.rate > 0 else -1
        return replace(self, records=records, rate=rate, producers=1)


def check_sending(seconds: float) -> None:
    """Refuse a producers' sending time no reader could wait out (a reader's ``sending_s``)."""
    if not (seconds >= 0 and math.isfinite(seconds)):
        raise KperfError(f"the producers' sending time must be zero or more finite seconds, got {seconds:g}")


@dataclass(frozen=True)
class ConsumerSpec:
    """What to read and how (picklable: it goes to worker processes)."""

    bootstrap: str
    topic: str
    records: int | None = None  # stop once this many were read (over all consumers) ...
    duration_s: float | None = None  # ... or after this long
    idle_timeout_s: float = 5.0  # ... or when nothing arrived for this long after the first record
    # ... counted only from this long after the first assignment: the producers' planned time, a silence during which
    # (a stalled host, a broker's fault) is no sign that they are done
    sending_s: float = 0.0
    join_timeout_s: float = JOIN_TIMEOUT_S  # the group must form (a first assignment) within this of subscribing
    config: Mapping[str, Any] = field(default_factory=dict)  # librdkafka settings: fetch.min.bytes, ...
    consumers: int = 1
    group: str = ""  # default: a new group, so the topic is read from its beginning
    end_to_end: bool = False  # record produce-to-consume latency (a producer runs at the same time)
    expected: Mapping[int, int] | None = None  # records per producer id, for verification
    window_s: float = WINDOW_S  # of the time series
    loop: str = "auto"  # the hot loop (kperf.drivers.loops): native where built, else python
    share: Sharing | None = None  # a share group's members, not a consumer group's
    written_by: Transactions | None = None  # its records' producers were transactional (the same rule, and ...
    warmup_records: int = 0  # ... these warm-up records each): which records were aborted, for verification
    progress_s: float = 0.0  # a progress line on stderr this often (kperf.drivers.progress); 0: none

    def check(self, librdkafka: bool = True) -> None:
        """Refuse bad input before any load starts (client settings: see ProducerSpec.check)."""
        if self.records is not None and self.records < 1:
            raise KperfError(f"records must be at least 1, got {self.records}")
        if self.duration_s is not None and self.duration_s <= 0:
            raise KperfError(f"duration must be positive, got {self.duration_s}")
        if self.consumers < 1:
            raise KperfError(f"consumers must be at least 1, got {self.consumers}")
        check_sending(self.sending_s)
        check_join_timeout(self.join_timeout_s)
        check_window(self.window_s, self.duration_s)
        if self.share is not None:
            self.share.check()
            share_groups.check(self.share.settings)
            if self.group:  # kperf sets the group up and deletes it after: never a group of the user's
                raise KperfError("a share group is kperf's own, made for the run and deleted after it: leave --group out")
        if librdkafka:
            clients.check_config(self.config, role="consumer" if self.share is None else "share")
            if self.share is not None:
                loops.check_share_loop(self.loop)
            loops.check_loop(self.loop)


@dataclass(frozen=True)
class ProcessorSpec:
    """A read-process-write processor (kperf.drivers.read_process_write): from ``source`` to ``sink``, ``records``
    of them, in transactions as ``transactions`` says, checked after each batch it reads (up to 10,000 records: a
    transaction of records holds at least its count) and at least as often as a timed one lasts; each commit sends
    the consumed offsets first, and its time counts that (picklable: it goes to a load process)."""

    bootstrap: str
    source: str
    sink: str
    records: int
    transactions: Transactions
    config: Mapping[str, Any] = field(default_factory=dict)  # its consumer's librdkafka settings
    producer_config: Mapping[str, Any] = field(default_factory=dict)  # its producer's
    idle_timeout_s: float = 5.0  # it stops when nothing arrived for this long after its last record
    join_timeout_s: float = JOIN_TIMEOUT_S  # ... or, before its first, this long after joining
    sending_s: float = 0.0  # neither counted before this long after joining (as ConsumerSpec's)
    group: str = ""  # its consumer group; default: a new one, reading the source from its beginning

    def check(self) -> None:
        """Refuse, before any load, what a processor cannot do: no record, an abort (it would have to rewind its
        consumer), settings a transactional producer makes its own, or settings librdkafka refuses."""
        if self.records < 1:
            raise KperfError(f"records must be at least 1, got {self.records}")
        self.transactions.check()
        if self.transactions.abort:
            raise KperfError("a read-process-write processor aborts no transaction: leave the abort share out")
        check_sending(self.sending_s)
        check_join_timeout(self.join_timeout_s)
        ProducerSpec(self.bootstrap, self.sink, 1, records=self.records, config=self.producer_config,
                     transactions=self.transactions).check()
        clients.check_config(self.config, role="consumer")
