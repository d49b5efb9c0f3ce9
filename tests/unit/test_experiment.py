"""The experiment registry: every experiment is one module and one notebook, found by name, complete."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from kperf.errors import KperfError
from kperf.paths import notebooks_dir
from kperf.study import experiment, profiles
from kperf.study.experiment import Experiment


def test_every_experiment_is_one_module_of_the_package_and_one_notebook() -> None:
    registered = experiment.registered()
    assert [e.order for e in registered] == sorted({e.order for e in registered})  # one order each: the study's
    for exp in registered:
        assert type(exp).__module__ == "kperf.study.experiment"
        assert exp.grid.__module__ == exp.analyze.__module__ == f"kperf.experiments.{exp.name}"
        assert (notebooks_dir() / f"{exp.name}.ipynb").is_file()
        assert exp.panels and exp.title


@pytest.mark.parametrize("name", experiment.names())
def test_each_experiments_points_are_picklable_for_remote_drivers(name: str) -> None:
    points = experiment.get(name).points(profiles.parameters(name, "smoke"))
    assert pickle.loads(pickle.dumps(points)) == points


def test_each_profile_value_is_a_parameter_of_its_experiment() -> None:
    for exp in experiment.registered():
        for profile, values in exp.profiles.items():
            assert set(values) <= set(exp.params), (exp.name, profile)


def test_a_new_experiment_registers_once_and_is_found_by_name() -> None:
    batch = experiment.get("batch")
    new = replace(batch, name="batch_copy", order=batch.order + 1)
    try:
        assert experiment.register(new) is new
        assert experiment.get("batch_copy") is new and "batch_copy" in experiment.names()
        with pytest.raises(KperfError, match="^experiment 'batch_copy' is registered twice$"):
            experiment.register(new)
    finally:
        experiment._registry.pop("batch_copy", None)


def test_an_experiment_without_values_for_a_profile_is_refused() -> None:
    with pytest.raises(KperfError, match="^experiment 'batch' gives no values for profile"):
        Experiment(**{**vars(experiment.get("batch")), "profiles": {"smoke": {}}})


def test_an_experiment_left_out_of_an_unknown_profiles_whole_study_is_refused() -> None:
    with pytest.raises(KperfError, match="^experiment 'batch': whole_study names unknown profile\\(s\\) huge$"):
        Experiment(**{**vars(experiment.get("batch")), "whole_study": ("smoke", "huge")})


def test_an_unknown_experiment_is_named_with_the_known_ones() -> None:
    with pytest.raises(KperfError, match=r"^unknown experiment 'bach' \(did you mean 'batch'\?\): choose from batch, throughput, "):
        experiment.get("bach")
    with pytest.raises(KperfError, match="^unknown experiment 'xyz': choose from batch, throughput, "):  # nothing near
        experiment.get("xyz")
