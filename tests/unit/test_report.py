"""The analysis and the report's text over a real recorded run (tests/data/sample-run)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import copy_sample_run
from kperf.analysis import published, stats
from kperf.analysis.findings import analyze, fitted_parameters
from kperf.results import ResultStore
from kperf.study import experiment
from tests.helpers import kperf


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    return ResultStore.of_run(copy_sample_run(tmp_path_factory.mktemp("sample"))).load()


def test_every_experiment_of_the_sample_is_answered(sample: pd.DataFrame) -> None:
    findings = analyze(sample)
    assert list(findings) == list(experiment.names())
    for name, finding in findings.items():
        assert finding.answers and not finding.table.empty, name
        assert all("nan" not in sentence for sentence in finding.answers), name
    # A fitted series is drawn only when its fit holds; a weak one is said to be so and not drawn.
    for name, per_series in (("partitions", 1), ("threads", 1), ("message_size", 2)):
        finding = findings[name]
        drawn = [a for a in finding.answers if "not drawn" not in a and "no curve fitted" not in a]
        assert len(finding.curves) == per_series * len(drawn), name
    codecs = findings["codecs"].table
    assert set(codecs.loc[codecs["metric"] == "producer records/s", "param.compression.type"]) == set(experiment.CODECS)
    fits = fitted_parameters(findings)
    assert set(fits["experiment"]) == {"throughput", "partitions", "threads", "message_size"}


def test_a_series_too_short_for_a_model_is_stated_not_drawn(sample: pd.DataFrame) -> None:
    one_count = sample[(sample["experiment"] == "partitions") & (sample["param.partitions"] == 1)]
    finding = experiment.get("partitions").analyze(one_count)
    assert finding.curves == () and finding.table.empty
    assert "measured best at 1 partitions" in finding.answers[0] and "no curve fitted" in finding.answers[0]


def test_a_retrograde_series_gets_the_usl_and_its_peak() -> None:
    # Throughput from the USL with sigma 0.05, kappa 0.01 (peak at N* = 9.7), two repeats 2% apart.
    n = np.repeat([1, 3, 6, 9, 12, 15, 18], 2)
    x = 10_000 * n / (1 + 0.05 * (n - 1) + 0.01 * n * (n - 1)) * np.tile([0.99, 1.01], 7)
    rows = pd.DataFrame({"experiment": "partitions", "role": "producer", "param.client": "python",
                         "param.partitions": n, "records_per_s": x})
    finding = experiment.get("partitions").analyze(rows)
    assert "the USL puts the peak at N*=9.7 partitions" in finding.answers[0], finding.answers
    (curve,) = finding.curves
    assert curve.x == "param.partitions" and max(curve.ys) == pytest.approx(max(x), rel=0.03)
    table = finding.table.set_index("parameter")
    assert table.loc["sigma", "ci95_low"] < 0.05 < table.loc["sigma", "ci95_high"]


def test_published_figures_ship_with_the_package_and_are_compared(sample: pd.DataFrame) -> None:
    assert set(published.series()["experiment"]) <= set(experiment.names())
    for name in ("batch", "throughput", "partitions", "threads", "message_size", "codecs", "replication"):
        sentences = published.comparisons(name, sample[sample["experiment"] == name])
        assert sentences and all(s.endswith(("agree.", "differ.", "agrees.", "differs.", "compare shapes."))
                                 for s in sentences), name


def test_shapes_are_named_from_the_series() -> None:
    x = pd.Series([3, 6, 9, 12, 15, 18, 21])
    s13 = pd.Series([91554.96, 140386.34, 168217.06, 179878.76, 187698.25, 179288.58, 164790.79])
    assert published.shape(x, s13) == "peaks then falls"  # S1.3, peak at 15
    assert published.shape(x, s13.sort_values()) == "rising"
    assert published.shape(x, pd.Series([100.0, 99, 98, 99, 100, 97, 98])) == "flat"
    assert published.shape(x, pd.Series([50.0, 90, 100, 99, 98, 97, 97])) == "levels off"


def test_report_of_a_folder_without_results_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = kperf(tmp_path, "report", str(tmp_path / "empty"))
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"kperf: error: {tmp_path / 'empty'} holds no results (expected Parquet files in {tmp_path / 'empty' / 'results'})"
    ]
    assert not (tmp_path / "empty" / "report.html").exists()


def test_median_interval_text() -> None:
    assert stats.interval_text(1500.0, 1400.0, 1600.0, 0.5, 2, " records/s") == "1,500 records/s (50% CI 1,400-1,600, n=2)"


def test_records_with_and_without_a_steady_state_go_through_the_tables_and_the_report(tmp_path: Path) -> None:
    from kperf.analysis import per_point, plots, report
    from kperf.results import Measurement, Result
    from kperf.series import Series

    store = ResultStore(tmp_path / "results")
    env = {"cluster": "local", "cpu_count": 2, "brokers": 3}
    windows = Series(1.0, tuple(float(i) for i in range(20)), (1.0,) * 20, (1000,) * 20, (10**5,) * 20, 20.0)
    for repeat in range(2):
        for client, series in (("java", None), ("python", windows)):  # the stock tool records no series
            measured = Measurement("producer", client, 20_000, 2 * 10**6, 20.0, series=series,
                                   resources={"client_cpu_pct": 50.0, "client_cpu_pct_busiest": 50.0})
            params = {"client": client, "rate": -1, "producers": 1, "precision": 0.1}
            store.append(Result("run", "batch", "batch.size=1", repeat, params, measured, env))
    records = store.load()
    table = per_point.table("batch", records)
    assert list(table["param.client"]) == ["java", "python"] and list(table["precise"]) == [True, True]
    assert table["steady_median"].iloc[1] == 1000 and pd.isna(table["steady_median"].iloc[0])
    assert plots.series_figure(records, store) is not None
    assert any("2 of 2 points met the precision target (10%)" in note for note in report.caveats(records))
    only_java = records[records["param.client"] == "java"].drop(columns=[c for c in records if c.startswith("steady_")])
    assert not per_point.table("batch", only_java).empty and plots.series_figure(only_java, store) is None


def test_the_points_that_miss_the_precision_target_are_counted_by_what_limited_them(tmp_path: Path) -> None:
    from kperf.analysis import report
    from kperf.results import Measurement, Result

    store = ResultStore(tmp_path / "results")
    env = {"cluster": "local", "cpu_count": 2, "brokers": 3}
    for point, rates, busiest in (("a", (1000, 1001), 50.0), ("b", (1000, 2000), 95.0), ("c", (500, 900), 40.0)):
        for repeat, rate in enumerate(rates):
            measured = Measurement("producer", "python", rate * 10, rate * 1000, 10.0,
                                   resources={"client_cpu_pct": busiest, "client_cpu_pct_busiest": busiest,
                                              "broker_cpu_pct": 150.0 if point == "c" else 10.0})
            params = {"client": "python", "rate": -1, "producers": 1, "precision": 0.1}
            store.append(Result("run", "batch", point, repeat, params, measured, env))
    (note,) = report.precision_notes(store.load())
    assert note.startswith("1 of 3 points met the precision target (10%)")
    assert note.endswith("What limited those that missed it: 1 load generator, 1 host CPU.")


def test_the_answer_table_has_a_row_per_experiment_with_its_question_interval_and_limit(sample: pd.DataFrame) -> None:
    from kperf.analysis import report

    answers = report.answers(sample)
    table = answers.data
    assert list(table["experiment"]) == [experiment.get(n).title for n in experiment.names()]
    assert table["question"].str.endswith("?").all() and (table["limit"] != "").all()
    batch = table.iloc[0]
    assert batch["answer"].startswith("batch.size=") and "throughput=-1" in batch["answer"]  # capped points aside
    assert "% CI, n=" in batch["interval"] and batch["ahead"].startswith(("yes: x", "no: x"))
    # What the report shows: no index column, the headings with their units, the long-table rule, both renderings.
    html, markdown = answers._repr_html_(), answers._repr_markdown_()
    assert "<details>" not in html and "ahead of the runner-up? (Welch, 5%)" in html
    assert markdown.splitlines()[2].startswith("| experiment ") and "nan" not in markdown


def test_tables_for_people_format_to_precision_and_collapse_when_long() -> None:
    from kperf.analysis import tables

    assert [tables.rate(v) for v in (123_456.7, 999.95, 12.345, 0.012345, float("nan"))] == [
        "123,000", "1,000", "12.3", "0.0123", ""]
    data = pd.DataFrame({"point": [f"p{i}" for i in range(20)], "median": np.linspace(1000, 20000, 20),
                         "cv": 0.05, "unstable": [False] * 19 + [True]}, index=range(100, 120))
    shown = tables.of(data, "Every point", "records/s", marked=data["unstable"], note="Marked: unstable.")
    text = shown.text()
    assert list(text.columns) == ["point", "median records/s", "CV", "unstable (CV > 10%)"]
    assert text.iloc[0].tolist() == ["p0", "1,000", "5%", "no"]
    html = shown._repr_html_()
    assert html.startswith("<details><summary>Every point: 20 rows") and ">100<" not in html  # no index
    assert shown._repr_markdown_().splitlines()[-3].startswith("| p19 *")


def test_published_numbers_sit_beside_ours_with_conditions_and_known_mistakes(sample: pd.DataFrame) -> None:
    (title, table, note), *_ = published.side_by_side("threads", sample[sample["experiment"] == "threads"])
    assert title == "S1.4 and this run: producer records/s against producer processes"
    assert list(table.columns) == ["producer processes", "S1.4 records/s", "this run records/s"]
    assert table["S1.4 records/s"].notna().sum() == 6 and table["this run records/s"].notna().any()
    assert "derived as 10,000,000 records" in note and "Compared with this run: Kafka" in note
    s15 = published.side_by_side("threads", sample)[1][2]
    assert "columns are swapped" in s15


def test_the_report_names_the_load_hosts_and_warns_when_one_was_full() -> None:
    from kperf.analysis.report import load_hosts

    records = pd.DataFrame([
        {"env.load_detail": '{"10.0.0.5": {"host_cpu_pct": 760.0, "cores": 8}, "10.0.0.6": {"host_cpu_pct": 300.0, '
                            '"cores": 8}}', "env.load_hosts": "10.0.0.5,10.0.0.6", "env.load_processes": 4,
         "env.clock_offset_ms": 0.4, "res.load_host_busy_pct": 95.0},
        {"env.load_detail": "{}", "env.load_hosts": "10.0.0.5", "env.load_processes": 1, "env.clock_offset_ms": 0.2,
         "res.load_host_busy_pct": 20.0},
        {"env.load_detail": None, "env.load_hosts": "here", "env.load_processes": 1, "env.clock_offset_ms": 0.0},
    ])
    hosts, warning = load_hosts(records)
    assert hosts.startswith("The load came from Dask workers on 2 host(s) (10.0.0.5, 10.0.0.6), up to 4 load processes")
    assert "(up to 0.4 ms" in hosts
    assert warning.startswith("Warning: in 1 of 2 records a load host's cores were 80% busy or more")
    assert "; 10.0.0.5 in 1)" in warning  # the full host named; 10.0.0.6 was at 38%
    assert load_hosts(records.iloc[2:]) == []  # load from this host alone: nothing to say


def _text(items: list[object]) -> str:
    """What the report shows of ``items``, as text: Markdown, tables (as both renderings format them), figures aside."""
    from IPython.display import Markdown

    from kperf.analysis import tables

    shown = []
    for item in items:
        if isinstance(item, Markdown):
            shown.append(str(item.data))
        elif isinstance(item, tables.Table | pd.DataFrame):
            table = item if isinstance(item, tables.Table) else tables.of(item)
            shown.append(table.text().to_string())
    return "\n".join(shown)


SHOWN_AS_A_RESULT = r"\b(nan|NaN|inf|xinf|None)\b"  # no number that is not one, in a report's words or cells


def test_a_report_with_failed_units_lists_them_and_shows_no_nan_inf_or_none(tmp_path: Path) -> None:
    """The sample run, with failed units built through the real records (a consumer that read nothing, a producer
    too short for a rate) and an experiment none of whose units measured (faults): the report, rendered by its own
    code, lists every failed unit with its reason, answers the rest, and shows no nan, inf or None as a result."""
    import re

    import matplotlib.pyplot as plt
    from IPython.display import Markdown

    from kperf.analysis import report
    from kperf.results import Measurement, Result

    run = copy_sample_run(tmp_path / "run")
    (run / "results" / "faults.parquet").unlink()
    store = ResultStore.of_run(run)
    env = {"cluster": "local", "cpu_count": 2, "brokers": 3, "kafka_version": "4.1.1"}
    batch = {"records": 100_000, "window_s": 0.1, "client": "python", "batch.size": 16384, "linger.ms": 0, "rate": -1}
    store.append(Result("r", "batch", "batch.size=16384 linger.ms=0 throughput=-1", 2, batch,
                        Measurement("producer", "python", 100_000, 10**8, 0.4), env),
                 Result("r", "batch", "batch.size=16384 linger.ms=0 throughput=-1", 2, batch,
                        Measurement.failed("consumer", "python", "the group did not form within 30 s"), env))
    faults = {"records": 60_000, "window_s": 0.1, "client": "python", "acks": "all", "rate": 2000, "duration_s": 30.0}
    for repeat in range(2):
        store.append(Result("r", "faults", "acks=all", repeat, faults, Measurement("producer", "python", 0, 0, 30.0), env))
    results = store.load()
    findings = analyze(results)
    assert findings["faults"].answers == ("No answer: all 2 of its measurements failed (the report lists them with "
                                          "the reasons).",)
    assert "1 of its" not in findings["batch"].answers[-1] and "2 of its 34 measurements failed" in findings["batch"].answers[-1]
    items: list[object] = [report.summary(results), report.answers(results), *report.failed_units_section(results)]
    for name, finding in findings.items():
        items += report.section(name, results, finding) + report.beside_published(name, results)
    text, table = report.clients_text(results)
    items += [text, table, "\n".join(report.caveats(results))]
    plt.close("all")
    shown = _text([Markdown(i) if isinstance(i, str) else i for i in items])
    assert re.findall(SHOWN_AS_A_RESULT, shown) == []
    failed = report.failed_units_section(results)[1].text()
    assert list(failed["why it failed"]) == ["rate over 0.40 s, below the 1 s a rate needs",
                                             "the group did not form within 30 s", "producer wrote no record",
                                             "producer wrote no record"]
    assert "(4 failed: left out of every answer" in report.summary(results)
    assert "no answer: all 2 of its measurements failed" in report.answers(results).data["answer"].str.cat()


def test_the_fault_answer_says_what_was_found_not_a_ratio_of_zeros(sample: pd.DataFrame) -> None:
    from kperf.analysis import report

    (row,) = [r for _, r in report.answers(sample).data.iterrows() if r["experiment"] == experiment.get("faults").title]
    assert row["answer"] == "pause 12s, acks=all: acknowledged records lost 0 in 2 of 2 repeat(s) (python producer)"
    assert row["ahead"] == "yes: pause 12s, acks=1 acknowledged records lost 786 here (p=0.0097)"  # no x0.00, no xinf


def test_the_capacity_page_lists_failed_trials_and_shows_no_nan_inf_or_none(tmp_path: Path) -> None:
    """A capacity run whose search met lost records (an infinite margin) and whose catch-up never caught up (no
    time): the page's verdict, search table and failed units, as text, show no nan, inf or None as a result."""
    import math
    import re

    from kperf.analysis import report
    from kperf.capacity import page, verdict
    from kperf.results import Measurement, Result

    found = {
        "workload": {"name": "orders", "target_rate": 1000.0, "describe": "1,000 records/s"},
        "sustain": [{"name": "produce latency p99", "bound": 50.0, "value": 12.0, "unit": "ms", "low": math.nan,
                     "high": math.nan, "note": "", "met": True}],
        "headroom": {"low": 1000.0, "high": 2000.0, "target": 1000.0, "trials": 3, "note": "narrowed", "failed": [],
                     "limited_by": None, "decisions": [{"rate": 1000.0, "outcome": "holds", "margins": [-0.5]},
                                                       {"rate": 2000.0, "outcome": "fails", "margins": [math.inf]}]},
        "catch_up": {"caught_up": False, "seconds": math.nan, "timeout_s": 30.0, "backlog_records": 50_000,
                     "sentence": "did not catch up"},
    }
    store = ResultStore.of_run(tmp_path)
    params = {"phase": "headroom", "rate": 2000.0, "duration_s": 10.0, "window_s": 1.0}
    store.append(Result("cap", "capacity", "headroom rate=2000", 0, params, Measurement("producer", "python", 20_000, 10**7, 10.0), {}),
                 Result("cap", "capacity", "headroom rate=2000", 0, {**params, "group": "g"},
                        Measurement.failed("consumer", "python", "the group did not form within 30 s"), {}))
    failed = report.failed_units_section(store.load())
    shown = "\n".join([verdict.sentence(found), page.verdict_table(found).data.to_string(),
                       page.search_table(found).to_string(), _text(failed)])
    assert re.findall(SHOWN_AS_A_RESULT, shown) == []
    assert list(failed[1].text()["why it failed"]) == ["the group did not form within 30 s"]
