"""A share group's settings checked before any load (kperf.kafka.share_groups), without a cluster."""

from __future__ import annotations

import pytest

from kperf.errors import KperfError
from kperf.kafka import share_groups


@pytest.mark.parametrize(("settings", "taken"), [
    ({"share.auto.offset.reset": "earliest"}, {"share.auto.offset.reset": "earliest"}),
    ({"share.auto.offset.reset": "by_duration:PT1H"}, {"share.auto.offset.reset": "by_duration:PT1H"}),
    ({"share.record.lock.duration.ms": 15000, "share.delivery.count.limit": "3"},
     {"share.record.lock.duration.ms": "15000", "share.delivery.count.limit": "3"}),
    ({"share.partition.max.record.locks": 100}, {"share.partition.max.record.locks": "100"}),
    ({"share.isolation.level": "read_committed"}, {"share.isolation.level": "read_committed"}),
    ({}, {}),
])
def test_settings_the_group_takes_are_given_as_kafka_takes_them(settings: dict[str, object], taken: dict[str, str]) -> None:
    assert share_groups.check(settings) == taken


@pytest.mark.parametrize(("settings", "named"), [
    ({"share.record.lock.duration.ms": 0}, "share.record.lock.duration.ms (how long a delivered record stays locked"),
    ({"share.record.lock.duration.ms": 999}, "at least 1000, got 999"),
    ({"share.delivery.count.limit": 1}, "share.delivery.count.limit"),
    ({"share.partition.max.record.locks": 99.5}, "got 99.5"),
    ({"share.delivery.count.limit": True}, "got True"),
    ({"share.auto.offset.reset": "beginning"}, "must be earliest, latest or by_duration:PT1H, got 'beginning'"),
    ({"share.isolation.level": "committed"}, "read_committed or read_uncommitted"),
    ({"share.auto.commit": "true"}, "unknown share group setting 'share.auto.commit'"),
])
def test_a_bad_setting_is_refused_in_one_line_naming_it(settings: dict[str, object], named: str) -> None:
    with pytest.raises(KperfError) as refused:
        share_groups.check(settings)
    assert named in str(refused.value) and "\n" not in str(refused.value)
