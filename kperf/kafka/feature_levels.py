"""A cluster's finalized feature levels (``transaction.version``, ``share.version``, ...) changed for a block and
always set back after it, through Kafka's own feature tool (``kafka-features.sh``, :mod:`kperf.kafka.admin_tools`).

A feature's level is the cluster's, for every client: a point that measures a level sets it before its load and
puts the one it found back after, whatever happened, and waits, within a bound, until the brokers report each
(ApiVersions), so no load runs at a level half-applied.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from kperf.errors import KperfError
from kperf.kafka import admin_tools, clients, features, security

LOG = logging.getLogger(__name__)
APPLIED_TIMEOUT_S = 30.0  # the brokers report a level set within this
POLL_S = 0.2


def level(bootstrap: str, feature: str) -> int:
    """The level ``feature`` is finalized at on ``bootstrap`` (0: not finalized), as its first broker to answer says."""
    return features.ask(bootstrap, security.current()).finalized.get(feature, 0)


def levels_everywhere(bootstrap: str, feature: str) -> set[int]:
    """The levels every live broker of ``bootstrap``'s cluster reports for ``feature`` (one: all agree)."""
    brokers = clients.metadata(bootstrap).brokers.values()
    return {level(f"{b.host}:{b.port}", feature) for b in brokers}


def set_level(bootstrap: str, feature: str, wanted: int) -> None:
    """Finalize ``feature`` at ``wanted`` (0: disable it) and wait until the brokers report it; a one-line error
    naming what the tool said otherwise."""
    found = level(bootstrap, feature)
    if found == wanted:
        return
    args = (["disable", "--feature", feature] if wanted == 0 else
            ["upgrade" if wanted > found else "downgrade", "--feature", f"{feature}={wanted}"])
    admin_tools.run("features", bootstrap, args, f"setting {feature} from {found} to {wanted}")
    deadline = time.monotonic() + APPLIED_TIMEOUT_S
    while levels_everywhere(bootstrap, feature) != {wanted}:  # no load at a level some broker has not taken
        if time.monotonic() >= deadline:
            raise KperfError(f"the brokers at {bootstrap} did not report {feature} at {wanted} within "
                             f"{APPLIED_TIMEOUT_S:g} s of setting it")
        time.sleep(POLL_S)


@contextmanager
def finalized(bootstrap: str, levels: Mapping[str, int]) -> Iterator[None]:
    """Each feature at its level in ``levels`` for the block; after it, each at the level it had before."""
    before = {feature: level(bootstrap, feature) for feature in levels}
    try:
        for feature, wanted in levels.items():
            set_level(bootstrap, feature, wanted)
        yield
    finally:  # each set back, even when another could not be; the block's own error stays the one raised
        failed = []
        for feature, found in before.items():
            try:
                set_level(bootstrap, feature, found)
            except KperfError as exc:
                failed.append(str(exc))
        if failed:
            if sys.exc_info()[0] is None:
                raise KperfError("; ".join(failed) + " (set it back with kafka-features.sh)")
            LOG.error("feature levels not set back: %s", "; ".join(failed))
