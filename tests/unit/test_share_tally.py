"""A share group's deliveries verified by sequence (kperf.drivers.share_tally), on crafted deliveries."""

from __future__ import annotations

import numpy as np

from kperf.drivers.share_answers import ACCEPT, REJECT, RELEASE
from kperf.drivers.share_tally import ShareTally
from kperf.results import Verification


def delivered(tally: ShareTally, sequences: list[int], deliveries: list[int], answers: list[int], producer: int = 1) -> None:
    n = len(sequences)
    tally.add(np.full(n, producer), np.array(sequences), np.array(deliveries), np.array(answers))


def test_a_released_record_accepted_on_its_redelivery_by_another_member_ends_once() -> None:
    first, second = ShareTally(limit=5), ShareTally(limit=5)
    delivered(first, [0, 1, 2, 3], [1, 1, 1, 1], [ACCEPT, RELEASE, REJECT, ACCEPT])
    delivered(second, [1], [2], [ACCEPT])
    first.merge(second)
    assert first.verification({1: 4}) == Verification(expected=4, missing=0, duplicated=0)
    assert (first.deliveries, first.redeliveries, first.released, first.rejected, first.archived_count()) == (5, 1, 1, 1, 1)


def test_a_record_released_at_its_last_delivery_is_archived_not_missing() -> None:
    tally = ShareTally(limit=2)
    delivered(tally, [0, 0], [1, 2], [RELEASE, RELEASE])
    check = tally.verification({1: 1})
    assert (check.missing, check.duplicated, tally.archived_count()) == (0, 0, 1)


def test_a_record_released_and_never_delivered_again_is_missing() -> None:
    tally = ShareTally(limit=5)
    delivered(tally, [0, 1, 2], [1, 1, 1], [ACCEPT, RELEASE, ACCEPT])
    assert tally.verification({1: 4}).missing == 2  # sequence 1 (released, not back) and 3 (never delivered)


def test_a_record_accepted_twice_or_accepted_and_archived_is_duplicated() -> None:
    first, second = ShareTally(limit=5), ShareTally(limit=5)
    delivered(first, [0, 1], [1, 1], [ACCEPT, REJECT])
    delivered(second, [0, 1], [2, 2], [ACCEPT, ACCEPT])
    first.merge(second)
    check = first.verification({1: 2})
    assert (check.missing, check.duplicated) == (0, 2)
