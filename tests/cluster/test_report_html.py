"""The report regenerated from a real recorded run (tests/data/sample-run) and read in headless Chromium."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import sync_playwright

from conftest import copy_sample_run
from kperf.study import experiment
from tests.helpers import kperf

CHROMIUM = os.environ.get("KPERF_CHROMIUM", "/usr/bin/chromium")
# As the machine's own probe starts it: no sandbox (root), no background calls to a closed network.
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
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(html.as_uri(), wait_until="load")
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
