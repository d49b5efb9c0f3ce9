"""Bad input is refused before kperf connects to anything, in one line that says where it was written and what was
probably meant; --plan refuses what a run would; each command's --help names the environment variables it reads.

The cluster given is one nothing listens on (127.0.0.1:1): a check made after connecting would answer "cannot reach
Kafka" instead of the message asserted, so every case here also shows the order of operations.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kperf import cli
from kperf.drivers.load_hosts.scheduler import WORKERS_ENV
from kperf.kafka import BOOTSTRAP_ENV, METRICS_ENV
from kperf.study.profiles import PROFILE_ENV
from tests.helpers import ROOT

NOWHERE = "127.0.0.1:1"
LOAD = ["--bootstrap", NOWHERE, "--topic", "t"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No cluster, profile, workers or run from the caller's environment; options that set variables undone."""
    for variable in (BOOTSTRAP_ENV, PROFILE_ENV, WORKERS_ENV, METRICS_ENV, "KPERF_RUN_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("KPERF_DATA", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``kperf argv`` in this process: its exit code (argparse's too), stdout and stderr."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["produce", *LOAD, "--records", "5", "--client", "jav"], "unknown client 'jav': choose python or java"),
        (["produce", *LOAD, "--records", "-5"], "records must be at least 1, got -5"),
        (["consume", *LOAD, "--records", "0"], "records must be at least 1, got 0"),
        (["produce", *LOAD, "--records", "5", "--duration", "3"], "either a record count or a duration"),
        (["produce", *LOAD, "--records", "5", "-X", "batch.size"], "-X 'batch.size' is not KEY=VALUE"),
        (["produce", *LOAD, "--records", "5", "-X", "compression.type=lz5"], 'Invalid value "lz5"'),
        (["consume", *LOAD, "--duration", "5", "--client", "java"], "--duration is not supported with --client java"),
        (["produce", *LOAD, "--records", "5", "--payload-file", "nosuch.txt"], "nosuch.txt"),
        (["produce", *LOAD, "--records", "5", "--abort-share", "0.1"], "got 0 records and 0 ms per transaction"),
        (["produce", *LOAD, "--records", "5", "--transaction-ms", "100", "--abort-share", "0.1"],
         "aborted transactions need a number of records per transaction"),
        (["produce", *LOAD, "--records", "5", "--transaction-records", "10", "--client", "java"],
         "with --client java a transaction ends by time only"),
        (["produce", *LOAD, "--records", "5", "--transaction-ms", "10", "-X", "transactional.id=x"],
         "leave transactional.id out"),
        (["study", "--bootstrap", NOWHERE, "--profile", "quick", "--set", "window_s=100"],
         "the time series' window (100 s) is longer than the point"),
        (["study", "--bootstrap", NOWHERE, "--set", "batch.recods=3"],
         "--set batch.recods=3: unknown parameter 'recods' for experiment 'batch' (did you mean 'records'?)"),
        (["study", "--bootstrap", NOWHERE, "--profile", "quik"], "unknown profile 'quik' (did you mean 'quick'?)"),
        (["study", "--bootstrap", NOWHERE, "bach"], "unknown experiment 'bach' (did you mean 'batch'?)"),
        (["consume", *LOAD, "--records", "5", "--join-timeout", "0"], "join timeout must be positive"),
        (["consume", *LOAD, "--records", "5", "--client", "java", "--join-timeout", "-2"],
         "join timeout must be positive and finite (seconds a consumer group may take to form), got -2"),
        (["capacity", str(ROOT / "examples" / "smoke.yaml"), "--bootstrap", NOWHERE, "--join-timeout", "0"],
         "join timeout must be positive"),
        (["study", "--bootstrap", NOWHERE, "--set", "join_timeout_s=0"], "parameter 'join_timeout_s' must be above 0, got 0"),
        (["study", "--bootstrap", NOWHERE, "--set", "end_to_end.join_timeout_s=-1"], "must be above 0, got -1"),
        (["cluster", "up", "--broker-config", "group.initial.rebalance.delay.ms"],
         "--broker-config 'group.initial.rebalance.delay.ms' is not KEY=VALUE"),
        (["cluster", "up", "--broker-config", "log.dirs=/tmp/x"], "--broker-config log.dirs is set by kperf for each node"),
    ],
)
def test_bad_input_is_refused_in_one_line_before_connecting(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 1 and err.startswith("kperf: error: ") and err.count("\n") == 1
    assert message in err and "cannot reach" not in err and out == ""


def test_plan_refuses_what_a_run_would(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "study", "--plan", "--profile", "quick", "--set", "window_s=100")
    assert code == 1 and out == "" and "is longer than the point (3.33333 s)" in err
    assert err.startswith("kperf: error: experiment 'batch', point batch.size=4096 linger.ms=0 throughput=30000 (python):")
    two = run(capsys, "study", "--plan", "--set", "batch.workers=tcp://a:1", "--set", "codecs.workers=tcp://b:1")
    assert two == (1, "", "kperf: error: parameter 'workers': one Dask scheduler per study, got tcp://a:1, tcp://b:1\n")
    code, out, err = run(capsys, "study", "--plan", "--workload", str(tmp_path / "nosuch.yaml"))
    assert code == 1 and out == "" and "nosuch.yaml" in err


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("repeats=abc", "--set repeats=abc: parameter 'repeats' must be a number, got 'abc'"),  # set for all: no 'batch.'
        ("batch.repeats=abc", "--set batch.repeats=abc: parameter 'batch.repeats' must be a number"),
        ("repets=3", "--set repets=3: unknown parameter 'repets': no experiment has it (did you mean 'repeats'?)"),
        ("bach.records=3", "--set bach.records=3: unknown experiment 'bach' (did you mean 'batch'?)"),
        ("acks=al", "--set acks=al: parameter 'acks': unknown value 'al', choose from 0, 1, all"),
        ("batch.records=1e-3", "--set batch.records=1e-3: parameter 'batch.records' must be a whole number"),
    ],
)
def test_a_set_names_itself_its_scope_and_the_closest_name(
    capsys: pytest.CaptureFixture[str], assignment: str, message: str
) -> None:
    code, _, err = run(capsys, "study", "--plan", "--set", assignment)
    assert code == 1 and err.startswith(f"kperf: error: {message}") and err.count("\n") == 1
    if not assignment.startswith("batch."):
        assert "'batch." not in err  # set for every experiment: not named as one experiment's


def test_an_integral_number_in_e_notation_is_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "study", "--plan", "--profile", "smoke", "--set", "batch.records=1e9", "batch")
    assert code == 0 and "  records = 1000000000\n" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("repeats: 2\nbatch:\n  records: lots\n", "bad.yaml:3: parameter 'batch.records' must be a number, got 'lots'"),
        ("repeats: 2\nrepets: 3\n", "bad.yaml:2: unknown parameter 'repets': no experiment has it (did you mean 'repeats'?)"),
        ("batch:\n  records: 5\ncodec:\n  codecs: [lz4]\n", "bad.yaml:3: unknown experiment 'codec' (did you mean 'codecs'?)"),
        ("repeats: 2\nbatch: [1\n", "bad.yaml:3: not valid YAML"),
        ("- 1\n", "bad.yaml:1: expected a mapping of experiments to parameters, got list"),
    ],
)
def test_a_config_error_names_its_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    code, _, err = run(capsys, "study", "--bootstrap", NOWHERE, "--config", str(tmp_path / "bad.yaml"))
    assert code == 1 and f"kperf: error: {tmp_path / message}" in err and "cannot reach" not in err


def test_a_profile_from_the_environment_is_named(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROFILE_ENV, "smoke")
    code, out, err = run(capsys, "study", "--plan", "partitions")
    assert code == 0 and err == f"kperf: profile smoke, from ${PROFILE_ENV} (no --profile given)\n"
    assert out.startswith("partitions: ")
    assert run(capsys, "study", "--plan", "--profile", "quick", "partitions")[2] == ""


def test_a_study_naming_no_experiment_says_what_its_profile_leaves_out(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "study", "--plan", "--profile", "quick")
    assert code == 0 and err == "".join(f"kperf: the quick study leaves out {name} (its time); name it to run it: "
                                        f"kperf study {name} --profile quick\n" for name in ("share_groups", "transactions",
                                                                                               "rebalance"))
    assert "share_groups:" not in out and "batch:" in out
    assert run(capsys, "study", "--plan", "--profile", "smoke")[2] == ""  # smoke's whole study runs every one
    code, out, err = run(capsys, "study", "--plan", "--profile", "quick", "share_groups")  # named: it runs
    assert code == 0 and err == "" and out.startswith("share_groups: ")


def test_a_report_of_a_missing_folder_says_it_does_not_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "report", "nosuch")
    assert code == 1 and err == f"kperf: error: {tmp_path / 'nosuch'}: no such folder\n"


@pytest.mark.parametrize(
    "argv", [["bench", "--records"], ["bench", "--repeats"], ["bench", "--producers"], ["produce", "--topic", "t", "--partitions"]]
)
def test_counts_below_one_are_refused_as_they_are_parsed(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run(capsys, *argv[:1], "--bootstrap", NOWHERE, *argv[1:], "-5")
    assert code == 2 and f"argument {argv[-1]}: must be at least 1, got -5" in err and "cannot reach" not in err


def test_bench_help_says_what_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bench", "--help")
    assert code == 0 and "a scheduler and one worker" in " ".join(out.split())


def documented() -> dict[str, set[str]]:
    """docs/environment.md's table: each variable (a row may name several) -> the commands that read it."""
    readers: dict[str, set[str]] = {}
    for line in (ROOT / "docs" / "environment.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            for variable in re.findall(r"`([A-Z_*]+)`", cells[0]):
                readers[variable] = set(re.findall(r"`([a-z]+)`", cells[2]))
    return readers


@pytest.mark.parametrize("command", cli.COMMANDS)
def test_each_commands_help_names_the_environment_variables_it_reads(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """As the one table of docs/environment.md says: no variable it reads left out, none it does not read named."""
    code, out, _ = run(capsys, command, "--help")
    table = documented()
    assert code == 0 and {BOOTSTRAP_ENV, PROFILE_ENV, WORKERS_ENV, "KPERF_SASL_*"} <= set(table)
    assert {v for v in table if v in out} == {v for v, readers in table.items() if command in readers}
    assert set(cli.VARIABLES) <= set(table)  # every variable a help can name is in the table
