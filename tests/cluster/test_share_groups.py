"""Share groups on a real cluster: a group's settings set before its members join and taken back after, and the
feature check that refuses a cluster without them."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import ShareConsumer
from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

from kperf.errors import KperfError
from kperf.kafka import clients, feature_levels, features, security, share_groups, topics
from tests.helpers import kperf

pytestmark = pytest.mark.cluster
RECORDS = 1_000
BOUND_S = 60.0  # every wait below ends by then


def group_settings(bootstrap: str, group: str) -> dict[str, tuple[str, ConfigSource]]:
    """The group's share settings as the cluster describes them: value and where it comes from."""
    resource = ConfigResource(ResourceType.GROUP, group)
    admin = clients.admin(bootstrap)  # held until the result is in: a collected client cancels it
    (described,) = admin.describe_configs([resource], request_timeout=30).values()
    return {name: (entry.value, ConfigSource(entry.source)) for name, entry in described.result(timeout=30).items()
            if name in share_groups.SETTINGS}


def read_all(bootstrap: str, group: str, topic: str) -> int:
    """Records a share consumer of ``group`` reads from ``topic`` until it has them all or BOUND_S passed."""
    consumer = ShareConsumer(clients.client_config(bootstrap, {"group.id": group}))
    consumer.subscribe([topic])
    read, deadline = 0, time.monotonic() + BOUND_S
    try:
        while read < RECORDS and time.monotonic() < deadline:
            read += sum(1 for message in consumer.poll(1.0) if message.error() is None)
        consumer.commit_sync()  # implicit acknowledgement: the last batch is accepted here, not at close
    finally:
        consumer.close()
    return read


def test_a_share_group_set_to_start_at_the_earliest_reads_the_records_already_there_and_is_removed_after(
        bootstrap: str) -> None:
    group = f"kperf-share-{uuid.uuid4().hex[:8]}"
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        producer = clients.producer(bootstrap)
        for i in range(RECORDS):
            producer.produce(topic, str(i).encode())
        assert producer.flush(30) == 0
        settings = {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": 20_000}
        with share_groups.configured(bootstrap, group, settings) as recorded:
            assert recorded == {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": "20000"}
            described = group_settings(bootstrap, group)
            assert described["share.auto.offset.reset"] == ("earliest", ConfigSource.GROUP_CONFIG)
            assert described["share.record.lock.duration.ms"] == ("20000", ConfigSource.GROUP_CONFIG)
            assert read_all(bootstrap, group, topic) == RECORDS  # with Kafka's default (latest): none of them
        after = group_settings(bootstrap, group)
        assert after["share.auto.offset.reset"][1] != ConfigSource.GROUP_CONFIG
        assert after["share.record.lock.duration.ms"][1] != ConfigSource.GROUP_CONFIG


def test_a_setting_outside_the_brokers_bounds_is_refused_before_any_member_joins(bootstrap: str) -> None:
    group = f"kperf-share-{uuid.uuid4().hex[:8]}"
    entered = False
    # 1,000 ms is the setting's own minimum; the brokers' group.share.min.record.lock.duration.ms is 15,000.
    with pytest.raises(KperfError, match=r"refused share group settings share.record.lock.duration.ms=1000: "):
        with share_groups.configured(bootstrap, group, {"share.record.lock.duration.ms": 1000}):
            entered = True
    assert not entered


def test_a_cluster_without_share_groups_is_named_with_the_feature_and_how_to_enable_it(tmp_path: Path,
                                                                                      bootstrap: str) -> None:
    assert features.ask(bootstrap, security.current()).finalized.get("share.version") == 1  # 4.3's default
    with feature_levels.finalized(bootstrap, {"share.version": 0}):  # at 1 again after it, once the brokers say so
        answered = features.ask(bootstrap, security.current())
        (why,) = {answered.missing(need) for need in features.SHARE_GROUPS} - {None}
        assert why == ("has share.version at level 0, and share groups needs level 1 "
                       "(kafka-features.sh upgrade --feature share.version=1)")
        # The study and a share consumer of either client refuse before load, in one line naming the feature.
        with topics.temporary(bootstrap, "share", 1, 1) as topic:
            refused = [kperf(tmp_path / "study", "study", "share_groups", "--profile", "smoke", "--bootstrap", bootstrap,
                             timeout=120),
                       *(kperf(tmp_path / client, "consume", "--bootstrap", bootstrap, "--topic", topic, "--records", "10",
                               "--share", "--client", client) for client in ("python", "java"))]
    for result in refused:
        assert result.returncode == 1
        (line,) = result.stderr.strip().splitlines()
        assert "share.version at level 0" in line and "kafka-features.sh upgrade --feature share.version=1" in line, line
    assert not any((tmp_path / name).exists() for name in ("study/runs", "python/adhoc", "java/adhoc"))
