"""A share consumer's deliveries and answers counted (kperf.drivers.share_tally), on crafted batches."""

from __future__ import annotations

import numpy as np

from kperf.drivers.share_answers import ACCEPT, REJECT, RELEASE
from kperf.drivers.share_tally import ShareTally


def test_each_answer_is_counted_and_only_accepted_and_archived_records_end() -> None:
    tally = ShareTally()
    ended = tally.add(np.array([1, 1, 1, 2, 5]), np.array([ACCEPT, RELEASE, REJECT, ACCEPT, RELEASE]), limit=5)
    assert ended.tolist() == [True, False, True, True, True]  # the last: released at the limit, archived
    assert (tally.deliveries, tally.redeliveries, tally.released, tally.rejected, tally.archived) == (5, 2, 2, 1, 2)


def test_a_groups_tallies_sum_and_give_deliveries_per_record() -> None:
    first, second = ShareTally(), ShareTally()
    first.add(np.array([1, 1]), np.array([ACCEPT, RELEASE]), limit=5)
    second.add(np.array([2]), np.array([ACCEPT]), limit=5)
    first.merge(second)
    measures = first.measures(ended=2)
    assert measures["share_deliveries"] == 3 and measures["share_deliveries_per_record"] == 1.5
    assert measures["share_redeliveries"] == 1 and measures["share_archived"] == 0
