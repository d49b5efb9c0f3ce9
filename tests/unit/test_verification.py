"""The consumer's bulk verification: identities parsed from a batch's headers, and the sequence ledger."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.payloads import HEADER, identities, identity_header
from kperf.results import Verification


def test_identities_of_a_batch_keep_the_records_order_and_skip_foreign_records() -> None:
    batch = [
        identity_header(7, 0, 10**18),
        None,  # a record from the stock tools: no headers
        [("trace", b"x"), *identity_header(8, 2**40, 5)],  # kperf's header not first
        [("other", b"y")],
        identity_header(2**32 - 1, 1, 0),
    ]
    read = identities(batch)
    assert read["producer"].tolist() == [7, 8, 2**32 - 1]
    assert read["sequence"].tolist() == [0, 2**40, 1]
    assert read["intended_ns"].tolist() == [10**18, 5, 0]


@pytest.mark.parametrize("value", [None, b"short", b"x" * 21, "not bytes but twenty"])
def test_a_kperf_header_of_another_size_or_type_is_not_an_identity(value: bytes | str | None) -> None:
    read = identities([[(HEADER, value)], identity_header(3, 4, 5)])
    assert read["producer"].tolist() == [3] and read["sequence"].tolist() == [4]


def test_no_identities_is_an_empty_array() -> None:
    assert len(identities([])) == 0 and len(identities([None, [("a", b"b")]])) == 0


def ledger_of(pairs: list[tuple[int, int]], batch: int) -> SequenceLedger:
    ledger = SequenceLedger()
    for start in range(0, len(pairs), batch):
        chunk = np.array(pairs[start : start + batch], dtype=np.int64).reshape(-1, 2)
        ledger.add_many(chunk[:, 0], chunk[:, 1])
    return ledger


@pytest.mark.parametrize("batch", [1, 3, 64, 10_000])
def test_bulk_ledger_counts_like_one_record_at_a_time(batch: int) -> None:
    rng = random.Random(batch)
    pairs = [(p, s) for p in (1, 2**31 + 5) for s in range(3_000) if s % 97]  # some missing
    pairs += [rng.choice(pairs) for _ in range(250)]  # some duplicated, also within a batch
    rng.shuffle(pairs)
    bulk = ledger_of(pairs, batch)
    one = SequenceLedger()
    for producer, sequence in pairs:
        one.add(producer, sequence)
    expected = {1: 3_000, 2**31 + 5: 3_000}
    missing = 2 * len(range(0, 3_000, 97))
    assert bulk.verification(expected) == one.verification(expected) == Verification(6_000, missing, 250)
    assert bulk.bits(1) == one.bits(1) == sum(1 << s for s in range(3_000) if s % 97)


def test_the_same_sequence_twice_in_one_batch_and_across_batches_is_duplicated() -> None:
    ledger = SequenceLedger()
    ledger.add_many(np.array([1, 1, 1]), np.array([5, 5, 6]))
    ledger.add_many(np.array([1]), np.array([6]))
    ledger.add_many(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert ledger.verification({1: 7}) == Verification(expected=7, missing=5, duplicated=2)
