"""Whether a trial had the local cluster's host to itself: the table of rows and answers."""

from __future__ import annotations

import math

import pytest

from kperf import disturbance


def row(host: float, brokers: float, clients: float, **more: object) -> dict[str, object]:
    return {"env.cluster": "local", "res.host_cpu_pct": host, "res.broker_cpu_pct": brokers,
            "res.client_cpu_pct": clients, **more}


# Trials of S1's capacity runs of 2026-11-28 (tests/data/sizing-run): two clean, two disturbed.
@pytest.mark.parametrize(
    ("record", "foreign", "disturbed"),
    [
        (row(70.07, 42.03, 25.11), 2.93, False),  # s1-capacity-1030, headroom at 2,604, repeat 1
        (row(104.58, 66.08, 37.43), 1.07, False),  # ... at 5,208, repeat 1
        (row(137.04, 38.56, 25.21), 73.27, True),  # ... at 1,302: the trial that failed alone
        (row(145.42, 53.98, 30.66), 60.78, True),  # ... at 2,604, repeat 2
        (row(75.0, 40.0, 10.0), 25.0, False),  # at the bound: not over it
        (row(60.0, 50.0, 20.0), -10.0, False),  # sampled at slightly different moments: below zero is clean
        (row(150.0, 40.0, 10.0, **{"env.cluster": "external"}), math.nan, False),  # the host is not the brokers'
        (row(150.0, 40.0, 10.0, **{"res.load_host_busy_pct": 90.0}), math.nan, False),  # load from load hosts
        (row(150.0, math.nan, 10.0), math.nan, False),  # brokers not sampled
        ({"env.cluster": "local"}, math.nan, False),  # nothing sampled
    ],
)
def test_a_trial_is_disturbed_when_the_host_used_more_than_a_quarter_core_beyond_the_brokers_and_clients(
        record: dict[str, object], foreign: float, disturbed: bool) -> None:
    found = disturbance.foreign_cpu_pct(record)
    assert (math.isnan(found) and math.isnan(foreign)) or found == pytest.approx(foreign)
    evidence = disturbance.disturbance(record)
    assert (evidence is not None) is disturbed
    if disturbed:
        assert evidence is not None and evidence.startswith("disturbed: ") and f"{foreign:.0f}% of a core" in evidence
