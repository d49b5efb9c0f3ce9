"""The report regenerated from a real recorded run (tests/data/sample-run) and read in headless Chromium."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import sync_playwright

from conftest import copy_sample_run
from kperf.exits import Exit
from kperf.study import experiment
from tests.helpers import kperf

CHROMIUM = os.environ.get("KPERF_CHROMIUM", "/usr/bin/chromium")
# As the machine's own probe starts it: no sandbox (root), no background calls to a closed network.
SCREEN = {"width": 1300, "height": 900}  # a laptop's first screen
# The report's first table: its title, where it starts and how many body rows it has.
FIRST_TABLE = """(() => { const t = document.querySelector('table');
  return {title: t.rows[0].innerText.trim(), top: t.getBoundingClientRect().top,
          rows: t.querySelectorAll('tbody tr').length}; })()"""
# Tables whose first column counts 0, 1, 2, ... (pandas' raw index), by their first heading.
INDEXED_TABLES = """Array.from(document.querySelectorAll('table')).filter(t => {
  const first = Array.from(t.querySelectorAll('tbody tr')).map(r => r.cells[0] ? r.cells[0].innerText.trim() : '');
  return first.length > 1 && first.every((v, i) => v === String(i)); }).map(t => t.innerText.slice(0, 80))"""
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def test_report_regenerates_from_records_and_renders_in_chromium(tmp_path: Path) -> None:
    run = copy_sample_run(tmp_path / "run")
    recorded = sorted((run / "results").iterdir())
    result = kperf(tmp_path, "report", str(run), timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted((run / "results").iterdir()) == recorded  # nothing measured, nothing added
    html, markdown = run / "report.html", run / "report.md"
    assert f"report written to {html}" in result.stdout

    # The Markdown twin's figures are files beside it, each one referenced.
    figures = sorted((run / "report_files").glob("*.png"))
    text = markdown.read_text()
    assert figures and all(f"report_files/{f.name}" in text for f in figures)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=SCREEN)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(html.as_uri(), wait_until="load")
        first_table = page.evaluate(FIRST_TABLE)
        indexed = page.evaluate(INDEXED_TABLES)
        images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.src.slice(0, 22)])")
        body = page.inner_text("body")
        headings = page.evaluate("Array.from(document.querySelectorAll('h1, h2, h3')).map(h => h.innerText.trim())")
        browser.close()
    assert errors == []
    # Every figure is embedded (the file stands alone) and decoded by the browser.
    assert len(images) >= len(experiment.names()) and len(images) == len(figures)
    assert all(complete and width > 0 and src == "data:image/png;base64," for complete, width, src in images), images
    for heading in ("Kafka performance report", "Experiments", "Beside the published studies",
                    "Python client against the stock Java tools", "Environment and caveats"):
        assert any(h.startswith(heading) for h in headings), heading
    for error_text in ("Traceback", "Error", "nan%", "Exception"):
        assert error_text not in body, error_text
    assert "print(" not in body and "import " not in body  # the code is hidden
    assert "Unthrottled, the python producer was fastest at" in body
    # The first screen answers: the answer table, a row per experiment, starts within it.
    assert first_table["title"] == "The answers" and first_table["top"] < SCREEN["height"], first_table
    assert first_table["rows"] == len(experiment.names())
    assert indexed == [], indexed  # no table numbers its rows 0, 1, 2, ...


def page_text(html: Path) -> tuple[str, list[str]]:
    """The text of ``html`` as headless Chromium renders it, and any error the page raised."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(html.as_uri(), wait_until="load")
        body = page.inner_text("body")
        browser.close()
    return body, errors


@pytest.mark.cluster
def test_compare_finds_a_smaller_batch_size_slower_and_a_run_unchanged_against_itself(tmp_path: Path, bootstrap: str) -> None:
    """Two short real studies of one point, the second with producer batch.size 256 bytes (below the record's 687):
    compared, that point is slower; a run against itself changes nowhere."""
    study = ["study", "partitions", "--profile", "smoke", "--bootstrap", bootstrap, "--set", "clients=[python]",
             "--set", "repeats=3", "--set", "partitions.partition_counts=[1]", "--set", "partitions.replication_factor=1",
             "--set", "records=20000"]
    for extra in ([], ["--set", "batch_size=256"]):
        result = kperf(tmp_path, *study, *extra, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]
    a, b = sorted((tmp_path / "runs").iterdir())

    result = kperf(tmp_path, "compare", a.name, str(b), timeout=600)  # a run id, and a folder
    assert result.returncode == Exit.WORSE, result.stderr[-2000:]  # a point significantly slower: a pipeline stops
    assert "Verdict: worse: 1 point(s) significantly slower in B." in result.stdout
    html = tmp_path / "compare" / f"{a.name}-vs-{b.name}" / "compare.html"
    assert f"comparison written to {html}" in result.stdout and html.with_suffix(".md").is_file()
    body, errors = page_text(html)
    assert errors == [] and "Traceback" not in body
    assert "partitions: batch.size (1 point(s))\t65536\t256" in body  # the differing condition, listed first
    assert body.index("What differed") < body.index("At a glance") < body.index("B against A, point by point")
    assert "1 point(s) in both runs, 1 slower in B" in body
    assert "\tslower\t" in body and "\tfaster\t" not in body

    result = kperf(tmp_path, "compare", a.name, a.name, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    body, errors = page_text(tmp_path / "compare" / f"{a.name}-vs-{a.name}" / "compare.html")
    assert errors == [] and "Nothing recorded differs" in body
    assert "1 point(s) in both runs, 1 no significant change." in body
    assert "\tslower\t" not in body and "\tfaster\t" not in body


def test_compare_refuses_bad_runs_in_one_line_naming_which(tmp_path: Path) -> None:
    run = copy_sample_run(tmp_path / "runs" / "sample")
    (tmp_path / "runs" / "empty").mkdir()
    for args, message in ((["nowhere", "sample"], "no run nowhere: neither a folder nor a run id under"),
                          (["sample", "empty"], "empty holds no results")):
        result = kperf(tmp_path, "compare", *args)
        assert result.returncode == 1 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    other = tmp_path / "runs" / "other" / "results"
    other.mkdir(parents=True)
    records = pd.read_parquet(next((run / "results").glob("*.parquet")))
    records.assign(point="elsewhere").to_parquet(other / "batch-1.parquet")
    result = kperf(tmp_path, "compare", "sample", "other")
    assert result.returncode == 1 and "sample and other have no point in common" in result.stderr, result.stderr
    assert not (tmp_path / "compare").exists()  # nothing written
