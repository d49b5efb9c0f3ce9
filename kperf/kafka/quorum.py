"""Which node is the KRaft quorum's active controller, as ``kafka-metadata-quorum.sh describe --status`` says
(DescribeQuorum, which confluent-kafka's admin client lacks): a fault on that node also costs the cluster its
controller until the quorum elects another, so a fault's record says whether it hit it."""

from __future__ import annotations

import re

from kperf.errors import KperfError
from kperf.kafka import admin_tools

LEADER = re.compile(r"^LeaderId:\s*(-?\d+)\s*$", re.MULTILINE)


def active_controller(bootstrap: str) -> int:
    """The node id of the quorum's leader, the active controller."""
    return leader_id(admin_tools.run("metadata-quorum", bootstrap, ["describe", "--status"],
                                     "describing the metadata quorum"))


def leader_id(status: str) -> int:
    """The ``LeaderId`` of ``describe --status`` output, or a one-line error when it has none."""
    found = LEADER.search(status)
    if found is None:
        raise KperfError("kafka-metadata-quorum.sh describe --status printed no LeaderId")
    return int(found.group(1))
