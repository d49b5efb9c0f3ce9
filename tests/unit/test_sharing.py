"""A share consumer's spec refused before any load (kperf.load.Sharing, checked by ConsumerSpec), without a cluster."""

from __future__ import annotations

import pytest

from kperf.drivers.specs import ConsumerSpec
from kperf.errors import KperfError
from kperf.load import Sharing


@pytest.mark.parametrize(("sharing", "loop", "named"), [
    (Sharing("auto"), "auto", "share acknowledgement mode must be implicit or explicit, got 'auto'"),
    (Sharing("implicit", release=0.1), "auto", "releasing or rejecting records needs explicit acknowledgement"),
    (Sharing("explicit", release=1.0), "auto", "the release share must be at least 0 and below 1"),
    (Sharing("explicit", reject=-0.5), "auto", "the reject share must be at least 0 and below 1"),
    (Sharing(group_settings={"share.record.lock.duration.ms": 0}), "auto", "share.record.lock.duration.ms"),
    (Sharing(), "native", "share consumers run the python loop only, not 'native'"),
])
def test_a_share_consumer_it_cannot_run_is_refused_in_one_line(sharing: Sharing, loop: str, named: str) -> None:
    with pytest.raises(KperfError) as refused:
        ConsumerSpec("127.0.0.1:1", "t", records=10, share=sharing, loop=loop).check()
    assert named in str(refused.value) and "\n" not in str(refused.value)


def test_the_delivery_limit_is_the_groups_setting_else_kafkas_default() -> None:
    assert Sharing().delivery_limit == 5
    assert Sharing(group_settings={"share.delivery.count.limit": "3"}).delivery_limit == 3


def test_a_consumer_groups_setting_or_a_named_group_is_refused_for_a_share_consumer() -> None:
    with pytest.raises(KperfError, match="invalid share consumer setting: .*auto.offset.reset.*--group-setting"):
        ConsumerSpec("127.0.0.1:1", "t", records=10, share=Sharing(), config={"auto.offset.reset": "earliest"}).check()
    with pytest.raises(KperfError, match="leave --group out"):
        ConsumerSpec("127.0.0.1:1", "t", records=10, share=Sharing(), group="mine").check()


@pytest.mark.parametrize(("release", "reject", "named"), [
    (1.0, 0.0, "the release share must be at least 0 and below 1"),
    (-0.1, 0.0, "got -0.1"),
    (0.0, 1.5, "the reject share"),
    (0.6, 0.4, "together must be below 1, got 0.6 + 0.4"),
])
def test_shares_outside_their_range_are_refused_in_one_line(release: float, reject: float, named: str) -> None:
    with pytest.raises(KperfError) as refused:
        Sharing("explicit", release, reject).check()
    assert named in str(refused.value)
