"""The study command end to end against a real cluster: measured points, executed notebooks, report."""

from __future__ import annotations

from pathlib import Path

from kperf.results import ResultStore
from tests.helpers import kperf


def test_smoke_study_writes_results_notebooks_and_a_report_with_a_plot(tmp_path: Path, bootstrap: str) -> None:
    result = kperf(tmp_path, "study", "--profile", "smoke", "--bootstrap", bootstrap, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert f"report written to {run / 'report.html'}" in result.stdout

    table = ResultStore(run / "results").load()
    assert sorted(table["param.batch.size"]) == [1024, 16384, 131072]
    assert (table["records"] == 20_000).all() and (table["errors"] == 0).all()
    assert (table["records_per_s"] > 0).all()
    assert {p.name for p in (run / "notebooks").iterdir()} == {"batch.ipynb", "report.ipynb"}

    html = (run / "report.html").read_text()
    assert "data:image/png;base64," in html  # the figure is embedded
    assert "Traceback" not in html and "highest producer throughput" in html


def test_study_against_an_unreachable_cluster_fails_fast(tmp_path: Path) -> None:
    result = kperf(tmp_path, "study", "--profile", "smoke", "--bootstrap", "127.0.0.1:1", timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("kperf: error: cannot reach Kafka at 127.0.0.1:1 within 10 s")
    assert not (tmp_path / "runs").exists()


def test_report_without_any_run_is_a_clear_error(tmp_path: Path) -> None:
    result = kperf(tmp_path, "report")
    assert result.returncode == 1 and "no run with results" in result.stderr
