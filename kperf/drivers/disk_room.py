"""Free disk under the local brokers' data: checked before a run that may write much, and at every window of one,
so that a long run (a soak) ends as a failed unit with its reason rather than filling the disk, which stops the
brokers (a user's brokers' disks are not seen from here)."""

from __future__ import annotations

import math
import os
import shutil

from kperf.errors import KperfError, MeasurementFailed

FLOOR_BYTES = 2 * 1024**3  # kept free: below it a broker's next segment roll may fail
FULL = "brokers' disk nearly full"  # a MeasurementFailed cause


def _gib(size: float) -> str:
    return f"{size / 1024**3:,.1f} GiB"


def require_room(folder: str, writes_bytes: float, topic: str) -> None:
    """Refuse, before load, a run that would write ``writes_bytes`` (all replicas; at most what the topic's retention
    keeps; ``math.inf``: not known before the run) where fewer would be left free than :data:`FLOOR_BYTES`."""
    free = shutil.disk_usage(folder).free
    if math.isinf(writes_bytes) and free < FLOOR_BYTES:
        raise KperfError(f"the brokers' disk ({folder}) has {_gib(free)} free, under the {_gib(FLOOR_BYTES)} kperf "
                         "keeps: free some first")
    if not math.isinf(writes_bytes) and free - writes_bytes < FLOOR_BYTES:
        raise KperfError(f"this run may write {_gib(writes_bytes)} to the brokers' disk ({folder}), which has "
                         f"{_gib(free)} free, and kperf keeps {_gib(FLOOR_BYTES)} free: set retention.bytes on {topic}, "
                         "or run shorter or slower")


class DiskWatch:
    """``check()`` at every window: the unit fails once ``folder`` has less than :data:`FLOOR_BYTES` free (no watch
    for an empty ``folder``, or one not on the host the load runs on: a Dask worker's elsewhere)."""

    def __init__(self, folder: str) -> None:
        self._folder = folder if folder and os.path.isdir(folder) else ""

    def check(self) -> None:
        if self._folder and (free := shutil.disk_usage(self._folder).free) < FLOOR_BYTES:
            raise MeasurementFailed(f"the brokers' disk ({self._folder}) had {_gib(free)} free, under the "
                                    f"{_gib(FLOOR_BYTES)} kperf keeps: the run stopped (set the topic's retention.bytes)",
                                    FULL)
