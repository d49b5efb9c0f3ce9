"""What every measured point's and capacity trial's topic goes through before the load (kperf.kafka.topics.temporary, primed):
a record on every partition, acknowledged by all replicas, then deleted; a topic that cannot be primed is named."""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import ConfigResource, ResourceType

from kperf.errors import KperfError
from kperf.kafka import clients, topics

pytestmark = pytest.mark.cluster


def test_a_primed_topic_had_a_record_on_every_partition_and_holds_none(bootstrap: str) -> None:
    with topics.temporary(bootstrap, "primed", 5, 3, {"min.insync.replicas": "2"}, primed=True) as topic:
        reader = clients.consumer(bootstrap, {"group.id": "kperf-watermarks"})
        try:
            marks = [reader.get_watermark_offsets(TopicPartition(topic, p), timeout=30) for p in range(5)]
        finally:
            reader.close()
        assert marks == [(1, 1)] * 5 and topics.held(bootstrap, topic) == 0
        resource, admin = ConfigResource(ResourceType.TOPIC, topic), clients.admin(bootstrap)  # held for the result
        found = admin.describe_configs([resource])[resource].result(timeout=30)  # whatever the cluster's default
        assert found["cleanup.policy"].value == "delete"


def test_topics_made_together_are_each_primed_and_all_deleted_after(bootstrap: str) -> None:
    layouts = [topics.Layout("together", 3, 3), topics.Layout("together", 2, 1, {"min.insync.replicas": "1"})]
    with topics.temporaries(bootstrap, layouts, primed=True) as made:
        assert len(set(made)) == 2 and all(name.startswith("kperf-together-") for name in made)
        reader = clients.consumer(bootstrap, {"group.id": "kperf-watermarks"})
        try:
            marks = [[reader.get_watermark_offsets(TopicPartition(name, p), timeout=30) for p in range(layout.partitions)]
                     for name, layout in zip(made, layouts, strict=True)]
        finally:
            reader.close()
        assert marks == [[(1, 1)] * 3, [(1, 1)] * 2]
    assert not set(made) & set(clients.metadata(bootstrap).topics)


def test_a_compacted_topic_is_refused_naming_the_brokers_reason(bootstrap: str) -> None:
    # A keyless record is refused by a compacted topic: only the user can change its policy, so no unit is retried.
    with pytest.raises(KperfError, match=r"^could not prime topic kperf-compacted-\w+: Broker: .*; kperf's topics need "
                       r"cleanup.policy=delete: a compacted topic takes no record without a key and deletes none$") as refused:
        with topics.temporary(bootstrap, "compacted", 1, 1, {"cleanup.policy": "compact"}, primed=True):
            pass
    assert type(refused.value) is KperfError  # not a failed measurement, which a study would try again
