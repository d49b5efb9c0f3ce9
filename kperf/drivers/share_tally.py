"""What a share group's consumers did with the records delivered to them, by producer id and sequence number.

A share group delivers a record to any of its members, perhaps more than once (released, its lock expired, its
member gone), so verification is by sequence over the whole group: every record sent must end accepted once, or
archived (rejected, or released at its last allowed delivery), and none of the records neither. Each consumer process
keeps one tally, the point's merge into one (:meth:`ShareTally.merge`), as a consumer group's ledgers do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.share_answers import ACCEPT, REJECT, RELEASE
from kperf.results import Verification


@dataclass
class ShareTally:
    """One share consumer's (or a merged group's) deliveries and answers."""

    limit: int  # the group's share.delivery.count.limit: a record released at this delivery is archived
    accepted: SequenceLedger = field(default_factory=SequenceLedger)
    archived: SequenceLedger = field(default_factory=SequenceLedger)
    deliveries: int = 0
    redeliveries: int = 0  # deliveries after a record's first
    released: int = 0
    rejected: int = 0

    def add(self, producers: np.ndarray, sequences: np.ndarray, deliveries: np.ndarray, answers: np.ndarray) -> None:
        """A batch of delivered records with their delivery counts and the answers given."""
        self.deliveries += len(sequences)
        self.redeliveries += int((deliveries > 1).sum())
        released, rejected = answers == RELEASE, answers == REJECT
        self.released += int(released.sum())
        self.rejected += int(rejected.sum())
        accepted = answers == ACCEPT
        self.accepted.add_many(producers[accepted], sequences[accepted])
        ended = rejected | (released & (deliveries >= self.limit))
        self.archived.add_many(producers[ended], sequences[ended])

    def merge(self, other: ShareTally) -> None:
        """Add another consumer's tally: a record both accepted is accepted twice (a duplicate)."""
        self.accepted.merge(other.accepted)
        self.archived.merge(other.archived)
        self.deliveries += other.deliveries
        self.redeliveries += other.redeliveries
        self.released += other.released
        self.rejected += other.rejected

    def verification(self, expected: Mapping[int, int]) -> Verification:
        """Records sent (``expected`` per producer id) that ended neither accepted nor archived are missing; a
        record accepted more than once, or both accepted and archived, is duplicated."""
        missing = 0
        for producer, n in expected.items():
            mask = (1 << n) - 1
            missing += n - ((self.accepted.bits(producer) | self.archived.bits(producer)) & mask).bit_count()
        both = sum((self.accepted.bits(p) & self.archived.bits(p)).bit_count() for p in expected)
        duplicated = self.accepted.duplicated + both
        return Verification(expected=sum(expected.values()), missing=missing, duplicated=duplicated)

    def archived_count(self) -> int:
        return sum(self.archived.bits(p).bit_count() for p in self.archived.seen)

    def accepted_count(self) -> int:
        return sum(self.accepted.bits(p).bit_count() for p in self.accepted.seen)
