"""What kperf asks of a Kafka-API cluster and how it says what is missing (kperf.kafka.features), without a cluster."""

from __future__ import annotations

import json

from kperf.kafka import features
from kperf.kafka.features import Features

ANSWERED = Features({0: (3, 6), 1: (4, 18), 3: (0, 13), 19: (0, 7), 20: (0, 6)}, {"metadata.version": 30})


def test_a_missing_api_is_named_with_its_key() -> None:
    assert ANSWERED.missing(features.api(32)) == "does not answer DescribeConfigs (API key 32)"
    assert ANSWERED.missing(features.api(1)) is None


def test_a_version_too_old_for_a_need_says_both_versions() -> None:
    assert ANSWERED.missing(features.CODECS["zstd"]) == "answers Produce only up to v6, and zstd compression needs v7"


def test_a_feature_not_finalized_high_enough_is_named_with_its_levels() -> None:
    share = Features({76: (1, 1)}, {"share.version": 0})
    need = features.Need("share groups", 76, 1, feature="share.version")
    assert share.missing(need) == ("has share.version at level 0, and share groups needs level 1 "
                                   "(kafka-features.sh upgrade --feature share.version=1)")
    assert Features({76: (1, 1)}, {"share.version": 1}).missing(need) is None


def test_a_producer_needs_its_codec_and_a_producer_id_only_when_it_asks() -> None:
    plain = features.for_producer({})
    assert features.CODECS["zstd"] not in plain and features.IDEMPOTENCE not in plain
    asked = features.for_producer({"compression.type": "zstd", "enable.idempotence": "true"})
    assert {features.CODECS["zstd"], features.IDEMPOTENCE} <= set(asked)
    assert features.CODECS["zstd"] in features.for_producer({"compression.codec": "ZSTD"})  # librdkafka's older name


def test_a_consumer_needs_the_group_protocol_it_asks_for() -> None:
    keys = {need.key for need in features.for_consumer({})}
    assert {11, 14} <= keys and 68 not in keys  # JoinGroup, SyncGroup: a classic group
    keys = {need.key for need in features.for_consumer({"group.protocol": "consumer"})}
    assert 68 in keys and 11 not in keys  # ConsumerGroupHeartbeat (KIP-848)


def test_what_a_record_carries() -> None:
    described = ANSWERED.describe()
    assert described["api_versions"] == "0:3-6,1:4-18,3:0-13,19:0-7,20:0-6"
    assert json.loads(described["features"]) == {"metadata.version": 30}
    assert Features({18: (0, 3)}).describe()["features"] == "{}"  # none reported: empty, not guessed


def test_the_java_client_is_idempotent_by_default_librdkafka_is_not() -> None:
    assert features.IDEMPOTENCE in features.for_producer({}, java=True)
    assert features.IDEMPOTENCE not in features.for_producer({"acks": "1"}, java=True)  # then it is not
    assert features.IDEMPOTENCE not in features.for_producer({"enable.idempotence": "false"}, java=True)


def test_share_groups_need_the_feature_finalized_and_their_requests() -> None:
    answered = Features({44: (0, 1), 42: (0, 2), 76: (1, 1), 78: (1, 2), 79: (1, 2)}, {"share.version": 0})
    (why,) = {answered.missing(need) for need in features.SHARE_GROUPS} - {None}
    assert why.startswith("has share.version at level 0, and share groups needs level 1")
    assert all(Features(answered.apis, {"share.version": 1}).missing(need) is None for need in features.SHARE_GROUPS)
