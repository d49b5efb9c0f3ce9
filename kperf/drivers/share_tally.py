"""What a share group's consumers did with the records delivered to them: deliveries, redeliveries, releases,
rejects, archived records, counted per consumer and summed over the group.

Which records ended (accepted, or archived) is verified apart, by sequence, in the loop's ledger (a record ended
twice is a duplicate, one that ended nowhere is missing), as a consumer group's reads are. What the client cannot
see: the brokers archive a record released at its last allowed delivery by a lock that expired or a member that
left; such a record is missing here, and ``redeliveries`` above ``released`` shows that locks expired or members
left meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kperf.drivers.share_answers import REJECT, RELEASE


@dataclass
class ShareTally:
    """One share consumer's (or a summed group's) deliveries and answers."""

    deliveries: int = 0
    redeliveries: int = 0  # deliveries after a record's first
    released: int = 0
    rejected: int = 0
    archived: int = 0  # rejected, or released at the group's delivery limit

    def add(self, deliveries: np.ndarray, answers: np.ndarray, limit: int) -> np.ndarray:
        """Count a batch (each record's delivery count and answer; ``limit``: the group's
        share.delivery.count.limit) and return which of its records ended here: accepted or archived."""
        released, rejected = answers == RELEASE, answers == REJECT
        archived = rejected | (released & (deliveries >= limit))
        self.deliveries += len(answers)
        self.redeliveries += int((deliveries > 1).sum())
        self.released += int(released.sum())
        self.rejected += int(rejected.sum())
        self.archived += int(archived.sum())
        return ~released | archived

    def merge(self, other: ShareTally) -> None:
        self.deliveries += other.deliveries
        self.redeliveries += other.redeliveries
        self.released += other.released
        self.rejected += other.rejected
        self.archived += other.archived

    def measures(self, ended: int) -> dict[str, float]:
        """The unit's share_* measures, ``ended`` records having ended in the group."""
        return {"share_deliveries": float(self.deliveries), "share_redeliveries": float(self.redeliveries),
                "share_released": float(self.released), "share_rejected": float(self.rejected),
                "share_archived": float(self.archived),
                "share_deliveries_per_record": self.deliveries / ended if ended else float("nan")}
