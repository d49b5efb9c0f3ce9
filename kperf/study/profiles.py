"""Scales of the study, and each experiment's settings under one of them, checked by name, type and range.

* ``smoke``: seconds per experiment; CI and nbval run it;
* ``quick``: the default; the whole study in about 20 minutes on a 2-core
  machine with a local 3-broker cluster;
* ``seed``: the grids and record counts of the published studies (S1-S5 in the
  docs/published.md), for a real cluster.

A profile's shared values (:data:`SHARED`) apply to every experiment that has
the parameter; each experiment's module gives its own values on top. A notebook
asks for its experiment's settings under a profile, overriding any of them;
``KPERF_PROFILE`` sets the profile when the notebook leaves it None. Overrides
come from keyword arguments, ``--set`` on the command line or a YAML file
(:mod:`kperf.study.overrides`); all go through :func:`check`, so a wrong name,
type or value is refused before any load starts, naming the parameter.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from kperf.errors import KperfError, closest
from kperf.load import JOIN_TIMEOUT_S
from kperf.study import experiment
from kperf.study.experiment import PROFILES

DEFAULT_PROFILE = "quick"
PROFILE_ENV = "KPERF_PROFILE"  # the profile of a study or notebook that names none

SHARED: dict[str, dict[str, Any]] = {
    # Seconds per experiment: every code path once, nothing stable. The Python client everywhere; the Java tools
    # only where an experiment drives them its own way (codecs, throughput, end_to_end, share_groups, transactions
    # name both): elsewhere a Java point repeats a path for seconds of JVM. Windows short enough for its
    # shortest paced point. Small records: a rate needs a second (kperf.validity), and a consumer reads several
    # hundred thousand records a second here whatever their size, so a point's records are sized up to that
    # (kperf.study.calibration) and 100-byte ones keep those runs to tens of MB, not the GB 687-byte ones took.
    "smoke": {"clients": ["python"], "repeats": 1, "warm_up_s": 0, "precision": 0.5, "extra_repeats": 0,
              "budget_s": 0, "window_s": 0.1, "join_timeout_s": JOIN_TIMEOUT_S, "workers": "", "record_size": 100,
              "records": 200_000,
              "partitions": 1, "replication_factor": 1, "acks": "all", "batch_size": 65536, "linger_ms": 5},
    # The default: about 20 minutes on a 2-core machine running 3 brokers and the clients, up to 20 s per
    # experiment of it on extra repeats for precision (the README's measured example, with its points' length):
    # tenth-of-a-second windows give those of 2 s on the 15 a steady rate's own interval needs (kperf.steady),
    # and the shortest (a consumer reading 200,000 records) a steady rate and steady resources for its limit.
    "quick": {"clients": ["python"], "repeats": 2, "warm_up_s": 45, "precision": 0.1, "extra_repeats": 2,
              "budget_s": 20, "window_s": 0.1, "join_timeout_s": JOIN_TIMEOUT_S, "workers": "", "record_size": 687, "records": 150_000,
              "partitions": 1, "replication_factor": 1, "acks": "all", "batch_size": 65536, "linger_ms": 5},
    # The published grids (S1-S5), both clients; each experiment's module says which study and what differs.
    "seed": {"clients": ["python", "java"], "repeats": 3, "warm_up_s": 60, "precision": 0.05, "extra_repeats": 7,
             "budget_s": 3600, "window_s": 1.0, "join_timeout_s": JOIN_TIMEOUT_S, "workers": "", "record_size": 687, "records": 10_000_000,
             "partitions": 1, "replication_factor": 1, "acks": "1", "batch_size": 10_000, "linger_ms": 0},
}


def values(name: str, profile: str) -> dict[str, Any]:
    """``name``'s unchecked values under ``profile``: the shared ones it has, then its own."""
    exp = experiment.get(name)
    return {**{k: v for k, v in SHARED[profile].items() if k in exp.params}, **exp.profiles[profile]}


def resolve_profile(profile: str | None) -> str:
    """``profile``, else $KPERF_PROFILE, else the default; an error for an unknown name."""
    name = profile or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
    if name not in PROFILES:
        source = "" if profile else f" (from ${PROFILE_ENV})"
        raise KperfError(f"unknown profile {name!r}{source}{closest(name, PROFILES)}: choose one of {', '.join(PROFILES)}")
    return name


def check(name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` checked against experiment ``name``'s parameters: names, types, ranges and its own rules."""
    exp = experiment.get(name)
    unknown = sorted(set(given) - set(exp.params))
    if unknown:
        raise KperfError(f"unknown parameter {unknown[0]!r} for experiment {name!r}{closest(unknown[0], exp.params)}: "
                         f"known are {', '.join(exp.params)}")
    checked = {key: exp.params[key].parse(f"{name}.{key}", value) for key, value in given.items()}
    exp.rules(checked)
    return checked


def parameters(name: str, profile: str | None = None, **overrides: Any) -> dict[str, Any]:
    """The settings of experiment ``name`` under ``profile``, with the non-None ``overrides`` applied and checked."""
    experiment.get(name)  # an unknown experiment is named before an unknown profile
    settings = values(name, resolve_profile(profile))
    given = {k: v for k, v in overrides.items() if v is not None}
    return check(name, {**settings, **given})


def overrides_for(name: str, overrides: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The overrides that apply to experiment ``name``: its own section, over those given for all ("*")."""
    shared = {k: v for k, v in overrides.get("*", {}).items() if k in experiment.get(name).params}
    return {**shared, **overrides.get(name, {})}
