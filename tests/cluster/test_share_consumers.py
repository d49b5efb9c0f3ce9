"""Share consumers (KIP-932) against real Kafka: more members than partitions deliver every record, releases come
back as redeliveries, rejects are archived, and every record sent ends accepted or archived, verified by sequence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kperf.drivers.consumer import consume
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec, Sharing
from kperf.kafka import topics
from kperf.results import Verification
from tests.helpers import kperf

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


def test_kperf_consume_share_records_the_groups_settings_and_what_it_answered(tmp_path: Path, bootstrap: str) -> None:
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        # Enough records for a rate (a second) at what three explicit members answer here (some 80,000 a second).
        produce(ProducerSpec(bootstrap, topic, 100, records=10 * RECORDS))
        result = kperf(tmp_path, "consume", "--bootstrap", bootstrap, "--topic", topic, "--records", str(10 * RECORDS),
                       "--share", "--consumers", "3", "--ack", "explicit", "--reject", "0.1",
                       "--group-setting", "share.delivery.count.limit=3", "--window", "0.1", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads(result.stdout)
    assert (record["param.share_ack"], record["param.share_reject"], record["param.share.delivery.count.limit"]) == (
        "explicit", 0.1, "3")
    assert record["param.share.auto.offset.reset"] == "earliest" and record["verified"] is True
    assert record["share_archived"] == record["share_rejected"] > 0
