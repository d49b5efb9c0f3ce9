"""Every profile is valid before anything runs; unknown names are refused by name."""

from __future__ import annotations

import pytest

from kperf import profiles, study
from kperf.errors import KperfError


@pytest.mark.parametrize("profile", sorted(profiles.PROFILES))
def test_every_profile_covers_every_experiment_with_sane_values(profile: str) -> None:
    for experiment in study.EXPERIMENTS:
        settings = profiles.parameters(experiment, profile)
        assert settings["records"] >= 1 and settings["record_size"] >= 1 and settings["repeats"] >= 1
        assert settings["partitions"] >= 1 and settings["replication_factor"] >= 1
        assert all(size >= 1 for size in settings["batch_sizes"])


def test_overrides_apply_and_none_keeps_the_profile() -> None:
    settings = profiles.parameters("batch", "smoke", records=5, batch_sizes=None)
    assert settings["records"] == 5
    assert settings["batch_sizes"] == profiles.PROFILES["smoke"]["batch"]["batch_sizes"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: profiles.parameters("batch", "huge"), "unknown profile 'huge'"),
        (lambda: profiles.parameters("batchy", "smoke"), "unknown experiment 'batchy'"),
        (lambda: profiles.parameters("batch", "smoke", bach_sizes=[1]), "unknown parameter 'bach_sizes'"),
        (lambda: study.check_experiments(["nope"]), "unknown experiment 'nope'"),
    ],
)
def test_unknown_names_are_refused(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KperfError, match=message):
        call()
