"""Every profile is valid before anything runs; overrides are checked by name, type and range."""

from __future__ import annotations

from pathlib import Path

import papermill
import pytest

from kperf.errors import KperfError
from kperf.paths import notebooks_dir
from kperf.study import experiment, overrides, plan, profiles, validation


@pytest.mark.parametrize("profile", experiment.PROFILES)
@pytest.mark.parametrize("name", experiment.names())
def test_every_profile_is_valid_for_every_experiment(profile: str, name: str) -> None:
    settings = profiles.parameters(name, profile)
    assert set(settings) == set(experiment.get(name).params)  # every parameter has a value
    validation.check(name, settings, brokers=3)  # every client's driver accepts every point (librdkafka its settings)
    units = plan.units(name, settings)
    assert units and len({u.key for u in units}) == len(units)  # point names are unique


def test_smoke_and_quick_fit_a_three_broker_cluster_and_quick_measures_repeats() -> None:
    for name in experiment.names():
        assert profiles.parameters(name, "quick")["repeats"] >= 2
        assert profiles.parameters(name, "smoke")["warm_up_s"] == 0


@pytest.mark.parametrize("name", experiment.names())
def test_each_notebook_takes_exactly_its_experiments_parameters(name: str) -> None:
    found = papermill.inspect_notebook(str(notebooks_dir() / f"{name}.ipynb"))
    assert set(found) == {"bootstrap", "run_dir", "profile", *experiment.get(name).params}
    assert all(p["default"] == "None" for p in found.values())  # the profile decides unless overridden


def test_overrides_apply_and_none_keeps_the_profile() -> None:
    settings = profiles.parameters("batch", "smoke", records=5, batch_sizes=None)
    assert settings["records"] == 5
    assert settings["batch_sizes"] == experiment.get("batch").profiles["smoke"]["batch_sizes"]


def test_yaml_and_set_overrides_merge_by_experiment(tmp_path: Path) -> None:
    config = tmp_path / "study.yaml"
    config.write_text("repeats: 4\nbatch:\n  batch_sizes: [1000, 2000]\n  acks: 1\ncodecs:\n  codecs: zstd\n")
    given = overrides.parse(config, ["batch.records=500", "partitions.rate=-1"])
    assert given == {
        "*": {"repeats": 4},
        "batch": {"batch_sizes": [1000, 2000], "acks": 1, "records": 500},
        "codecs": {"codecs": "zstd"},
        "partitions": {"rate": -1},
    }
    batch = profiles.parameters("batch", "smoke", **profiles.overrides_for("batch", given))
    assert batch["repeats"] == 4 and batch["acks"] == "1" and batch["batch_sizes"] == [1000, 2000]
    assert profiles.parameters("codecs", "smoke", **profiles.overrides_for("codecs", given))["codecs"] == ["zstd"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("batch:\n  records: lots\n", "parameter 'batch.records' must be a number, got 'lots'"),
        ("batch:\n  records: 1.5\n", "parameter 'batch.records' must be a whole number"),
        ("batch:\n  batch_sizes: [1024, true]\n", "parameter 'batch.batch_sizes' must be a number, got True"),
        ("codecs:\n  codecs: [lz4, brotli]\n", "parameter 'codecs.codecs': unknown value 'brotli'"),
        ("partitions:\n  partition_counts: [0, 3]\n", "parameter 'partitions.partition_counts' must be at least 1"),
        ("batch:\n  throughputs: [0]\n", "parameter 'batch.throughputs' must be at least 1 (or -1: unthrottled)"),
        ("batch:\n  clients: []\n", "parameter 'batch.clients' needs at least one value"),
        ("batch:\n  acks: yes\n", "parameter 'batch.acks' must be text, got True"),
        ("batch:\n  bach_sizes: [1]\n", "unknown parameter 'bach_sizes' for experiment 'batch'"),
        ("batch:\n  precision: 0\n", "parameter 'batch.precision' must be above 0, got 0"),
        ("batch:\n  precision: -0.1\n", "parameter 'batch.precision' must be above 0, got -0.1"),
        ("batch:\n  precision: 1.5\n", "parameter 'batch.precision' must be at most 1, got 1.5"),
        ("threads:\n  clients: [java]\n", "parameter 'clients' of experiment 'threads'"),
        ("batch:\n  workers: 10.0.0.5:8786\n", "parameter 'batch.workers' must look like tcp://host:8786, got '10.0.0.5:8786'"),
    ],
)
def test_wrong_values_from_yaml_are_refused_naming_the_parameter(tmp_path: Path, yaml_text: str, message: str) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(yaml_text)
    with pytest.raises(KperfError, match=message.replace("(", r"\(").replace(")", r"\)")):
        given = overrides.parse(config)  # each value is checked where it was written ...
        for name in given:  # ... and the rules between them with the profile's values
            profiles.parameters(name, "smoke", **profiles.overrides_for(name, given))


@pytest.mark.parametrize(
    ("yaml_text", "sets", "message"),
    [
        ("- 1\n- 2\n", [], "expected a mapping of experiments to parameters, got list"),
        ("batch: [1\n", [], "not valid YAML"),
        ("codec:\n  codecs: [lz4]\n", [], "unknown experiment 'codec'"),
        ("", ["recordz=5"], "unknown parameter 'recordz': no experiment has it"),
        ("", ["nope.records=5"], "unknown experiment 'nope'"),
        ("", ["records"], "--set 'records' is not"),
    ],
)
def test_malformed_overrides_are_refused(tmp_path: Path, yaml_text: str, sets: list[str], message: str) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(yaml_text)
    with pytest.raises(KperfError, match=message):
        overrides.parse(config if yaml_text else None, sets)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: profiles.parameters("batch", "huge"), "unknown profile 'huge'"),
        (lambda: profiles.parameters("batchy", "smoke"), "unknown experiment 'batchy'"),
        (lambda: plan.check_experiments(["nope"], "smoke"), "unknown experiment 'nope'"),
        (lambda: plan.check_experiments(["nope"], "huge"), "unknown experiment 'nope'"),  # named before the profile
        (lambda: plan.check_experiments([], "huge"), "unknown profile 'huge'"),
        (lambda: plan.resolve(["batch"], "smoke", {"codecs": {"records": 1}}), "experiment 'codecs', which"),
        (
            lambda: validation.check("partitions", profiles.parameters("partitions", "smoke"), brokers=1),
            "parameter 'replication_factor' of experiment 'partitions': 3 is above the 1 live broker",
        ),
        (
            lambda: validation.check("batch", profiles.parameters("batch", "smoke", batch_sizes=[2**31]), 3),
            "invalid producer setting",
        ),
        (  # the Java tools would find out only once started: librdkafka judges every setting first
            lambda: validation.check("batch", profiles.parameters("batch", "smoke", batch_sizes=[2**31], clients=["java"]), 3),
            "invalid producer setting",
        ),
    ],
)
def test_unknown_names_and_impossible_values_are_refused(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KperfError, match=message):
        call()


def test_the_profiles_with_shared_values_are_those_every_experiment_gives_values_for() -> None:
    assert tuple(profiles.SHARED) == experiment.PROFILES


@pytest.mark.parametrize("profile", experiment.PROFILES)
def test_a_study_naming_no_experiment_runs_those_its_profile_keeps_in_order(profile: str) -> None:
    whole = plan.check_experiments([], profile)
    assert whole == [e.name for e in experiment.registered() if profile in e.whole_study]
    assert sorted(whole + plan.left_out(profile)) == sorted(experiment.names())
    assert plan.check_experiments(["codecs", "batch"], profile) == ["codecs", "batch"]  # named: as named, whatever


def test_the_quick_study_leaves_share_groups_transactions_and_rebalance_out_and_smoke_and_seed_keep_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert plan.left_out("quick") == ["share_groups", "transactions", "rebalance"]
    assert plan.left_out("smoke") == plan.left_out("seed") == []
    monkeypatch.setenv(profiles.PROFILE_ENV, "smoke")
    assert "share_groups" in plan.check_experiments([], None)  # no profile given: $KPERF_PROFILE's study


def test_a_study_runs_its_load_on_one_dask_scheduler() -> None:
    settings = plan.resolve(["batch", "codecs"], "smoke", {"*": {"workers": "tcp://10.0.0.5:8786"}})
    assert plan.study_workers(settings) == "tcp://10.0.0.5:8786"
    assert plan.study_workers(plan.resolve(["batch"], "smoke", {})) is None
    two = plan.resolve(["batch", "codecs"], "smoke", {"batch": {"workers": "tcp://a:1"}, "codecs": {"workers": "tcp://b:1"}})
    with pytest.raises(KperfError, match="^parameter 'workers': one Dask scheduler per study, got tcp://a:1, tcp://b:1$"):
        plan.study_workers(two)


def test_a_value_given_for_every_experiment_is_checked_by_those_that_run() -> None:
    # rate -1 is unthrottled in partitions, but below the faults experiment's minimum of 1
    assert overrides.parse(None, ["rate=-1"], ["partitions"]) == {overrides.ALL: {"rate": -1}}
    with pytest.raises(KperfError, match=r"^--set rate=-1: parameter 'rate' must be at least 1"):
        overrides.parse(None, ["rate=-1"], ["partitions", "faults"])


def test_a_config_file_may_share_values_through_yaml_merge_keys(tmp_path: Path) -> None:
    config = tmp_path / "study.yaml"
    config.write_text("batch: &shared\n  repeats: 3\ncodecs:\n  <<: *shared\n  records: 500\n")
    assert overrides.parse(config) == {"batch": {"repeats": 3}, "codecs": {"repeats": 3, "records": 500}}
