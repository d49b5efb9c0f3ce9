"""Scales of the study: the same experiments with more or fewer points and records.

* ``smoke``: seconds per experiment; CI and nbval run it;
* ``quick``: the default; enough records per point to be stable on a laptop;
* ``seed``: the grids and record counts of the published studies
  (see the README's "Published studies"), for a real cluster.

A notebook asks for its experiment's settings under a profile, overriding any
of them; ``KPERF_PROFILE`` sets the profile when the notebook leaves it None.
"""

from __future__ import annotations

import os
from typing import Any

from kperf.errors import KperfError

DEFAULT_PROFILE = "quick"

PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "smoke": {
        "batch": {
            "batch_sizes": [1024, 16384, 131072],
            "records": 20_000,
            "record_size": 687,
            "linger_ms": 5,
            "acks": "all",
            "partitions": 1,
            "replication_factor": 1,
            "repeats": 1,
            "warm_up_s": 0,
        },
    },
    "quick": {
        "batch": {
            "batch_sizes": [5000, 10000, 20000, 40000, 80000, 160000, 320000],
            "records": 400_000,
            "record_size": 687,
            "linger_ms": 5,
            "acks": "all",
            "partitions": 1,
            "replication_factor": 1,
            "repeats": 3,
            "warm_up_s": 30,
        },
    },
    # S1.1: 687-byte records, 1M per point, one partition, rf 1, Kafka 2.3's
    # producer defaults of the time (linger.ms 0, acks 1).
    "seed": {
        "batch": {
            "batch_sizes": [5000, 10000, 20000, 40000, 60000, 80000],
            "records": 1_000_000,
            "record_size": 687,
            "linger_ms": 0,
            "acks": "1",
            "partitions": 1,
            "replication_factor": 1,
            "repeats": 3,
            "warm_up_s": 60,
        },
    },
}


def resolve_profile(profile: str | None) -> str:
    """``profile``, else $KPERF_PROFILE, else the default; an error for an unknown name."""
    name = profile or os.environ.get("KPERF_PROFILE") or DEFAULT_PROFILE
    if name not in PROFILES:
        raise KperfError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")
    return name


def parameters(experiment: str, profile: str | None = None, **overrides: Any) -> dict[str, Any]:
    """The settings of ``experiment`` under ``profile``, with the non-None ``overrides`` applied."""
    settings = PROFILES[resolve_profile(profile)].get(experiment)
    if settings is None:
        raise KperfError(f"unknown experiment {experiment!r}: choose one of {', '.join(PROFILES[DEFAULT_PROFILE])}")
    unknown = sorted(set(overrides) - set(settings))
    if unknown:
        raise KperfError(f"unknown parameter {unknown[0]!r} for experiment {experiment!r}: known are {', '.join(settings)}")
    return {**settings, **{k: v for k, v in overrides.items() if v is not None}}
