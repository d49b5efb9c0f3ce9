"""A consumer's hand-over commit on losing partitions: made when it can be, never a failure when there is nothing
to hand over or no coordinator to take it (kperf.drivers.consumer_loop.NOT_HANDED_OVER)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kperf.drivers.consumer_loop import NOT_HANDED_OVER, _commit_read


class Committing:
    """What _commit_read asks of a consumer: one synchronous commit, answered with ``code`` (None: made)."""

    def __init__(self, code: int | None) -> None:
        self.code, self.commits = code, 0

    def commit(self, asynchronous: bool) -> None:
        assert asynchronous is False
        self.commits += 1
        if self.code is not None:
            raise KafkaException(KafkaError(self.code))


LOST = [TopicPartition("t", 0)]


@pytest.mark.parametrize("code", sorted(NOT_HANDED_OVER))
def test_nothing_read_or_no_coordinator_is_not_a_failure(code: int) -> None:
    consumer = Committing(code)
    _commit_read(consumer, LOST)  # type: ignore[arg-type]
    assert consumer.commits == 1


def test_any_other_commit_error_fails_the_read() -> None:
    with pytest.raises(KafkaException):
        _commit_read(Committing(KafkaError.GROUP_AUTHORIZATION_FAILED), LOST)  # type: ignore[arg-type]


def test_no_partitions_lost_commits_nothing() -> None:
    consumer = Committing(None)
    _commit_read(consumer, [])  # type: ignore[arg-type]
    assert consumer.commits == 0
