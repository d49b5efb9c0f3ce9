"""Share consumers (KIP-932) against real Kafka: more members than partitions deliver every record, releases come
back as redeliveries, rejects are archived, and every record sent ends accepted or archived, verified by sequence."""

from __future__ import annotations

import pytest

from kperf.drivers.consumer import consume
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec, Sharing
from kperf.kafka import topics
from kperf.results import Verification

pytestmark = pytest.mark.cluster
RECORDS = 20_000


def test_more_share_consumers_than_partitions_deliver_every_record_and_end_each_once(bootstrap: str) -> None:
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        assert produce(ProducerSpec(bootstrap, topic, 100, records=RECORDS)).records == RECORDS
        got = consume(ConsumerSpec(bootstrap, topic, records=RECORDS, consumers=3, idle_timeout_s=5, share=Sharing()))
    assert got.records == RECORDS and got.verification == Verification(expected=RECORDS, missing=0, duplicated=0)
    assert got.errors == {} and got.measures["share_deliveries"] >= RECORDS and got.measures["share_archived"] == 0


def test_released_records_come_back_and_rejected_ones_are_archived(bootstrap: str) -> None:
    sharing = Sharing("explicit", release=0.1, reject=0.05)
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        produce(ProducerSpec(bootstrap, topic, 100, records=RECORDS))
        got = consume(ConsumerSpec(bootstrap, topic, records=RECORDS, consumers=2, idle_timeout_s=5, share=sharing))
    m = got.measures
    assert got.errors == {} and got.verification == Verification(expected=RECORDS, missing=0, duplicated=0)
    # Each released record is delivered again (and accepted then); each rejected one is archived, never again.
    assert m["share_released"] > 0 and m["share_redeliveries"] >= m["share_released"]
    assert m["share_rejected"] > 0 and m["share_archived"] == m["share_rejected"]
    assert m["share_deliveries"] - m["share_redeliveries"] <= RECORDS
