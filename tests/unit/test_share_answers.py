"""A share consumer's answers drawn from the record's identity (kperf.drivers.share_answers), without a cluster."""

from __future__ import annotations

import numpy as np

from kperf.drivers import share_answers
from kperf.drivers.share_answers import ACCEPT, REJECT, RELEASE

N = 200_000


def test_the_shares_hold_over_the_records_and_only_first_deliveries_are_released_or_rejected() -> None:
    producers, sequences = np.repeat([7, 8], N // 2), np.tile(np.arange(N // 2), 2)
    first = share_answers.answers(producers, sequences, np.ones(N, dtype=np.int64), release=0.1, reject=0.05)
    # A binomial count of N draws: 5 standard deviations is never crossed by a correct hash.
    for answer, share in ((RELEASE, 0.1), (REJECT, 0.05), (ACCEPT, 0.85)):
        assert abs((first == answer).sum() - share * N) < 5 * np.sqrt(N * share * (1 - share)), answer
    again = share_answers.answers(producers, sequences, np.full(N, 2), release=0.1, reject=0.05)
    assert (again == ACCEPT).all()


def test_the_same_record_gets_the_same_answer_whatever_its_batch() -> None:
    producers, sequences = np.array([3, 3, 4, 4]), np.array([10, 11, 10, 11])
    whole = share_answers.answers(producers, sequences, np.ones(4), release=0.5, reject=0.2)
    parts = [share_answers.answers(producers[i:i + 1], sequences[i:i + 1], np.ones(1), 0.5, 0.2)[0] for i in range(4)]
    assert whole.tolist() == parts


def test_no_shares_accept_everything() -> None:
    assert (share_answers.answers(np.zeros(1000), np.arange(1000), np.ones(1000), 0.0, 0.0) == ACCEPT).all()
