"""A transactional producer that aborts a share of its transactions, then its topic read back at both isolation
levels: which records of aborted transactions each read, checked by sequence number against those written.

Reading back is a check, not a measured read (as the fault experiment reads its topic back): the producer's record
carries what it found, so a verification read too short to give a rate fails nothing, and no consumer's span
makes the producer send more.
"""

from __future__ import annotations

from dataclasses import replace

from kperf.drivers import transactions
from kperf.drivers.consumer import consume
from kperf.drivers.driver import Driver
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.load import ISOLATION, ISOLATION_LEVELS
from kperf.results import ABORTED_READ, MISSING, Measurement

READ_BACK_IDLE_S = 5.0  # a read back stops when nothing arrived for this long after its first record


def produced_and_read_back(driver: Driver, spec: ProducerSpec) -> Measurement:
    """Produce ``spec`` (transactional, some transactions aborted) with ``driver``, then read the topic back with
    read_uncommitted and read_committed consumers (the Python client): ``spec``'s measurement with what each read."""
    assert spec.transactions is not None
    produced = driver.produce(spec)
    found: dict[str, float] = {}
    for level in ISOLATION_LEVELS:
        asked = transactions.readable(produced.records + spec.warmup_records * spec.producers, produced.measures,
                                      {ISOLATION: level})
        reader = ConsumerSpec(spec.bootstrap, spec.topic, idle_timeout_s=READ_BACK_IDLE_S, config={ISOLATION: level},
                              records=asked, written_by=spec.transactions, warmup_records=spec.warmup_records)
        read = consume(reader, checked=True)
        v = read.verification
        found[ABORTED_READ[level]] = read.measures.get(transactions.READ_ABORTED, 0)
        # Missing by sequence, or at least the records asked that no distinct one read stands for (the ledger
        # cannot see a lost last record, or a producer none of whose records arrived).
        found[MISSING[level]] = (max(v.missing, asked - (read.records - v.duplicated)) if v is not None
                                 else float("nan"))
    return replace(produced, measures={**produced.measures, **found})
