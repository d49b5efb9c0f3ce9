"""An experiment notebook used as a person uses it: JupyterLab on 127.0.0.1, opened in headless Chromium, every cell
run against the local cluster, its progress bar and its figure seen on the page."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.cluster.test_report_html import CHROMIUM, CHROMIUM_ARGS
from tests.helpers import ROOT

pytestmark = pytest.mark.cluster
START_S = 120  # JupyterLab serving, and the page's notebook drawn
RUN_S = 600  # every cell of the smoke batch experiment run
# The notebook's kernel started and idle (the toolbar names it; before it starts, the indicator says idle too).
KERNEL_IDLE = ("document.querySelector('.jp-Toolbar-kernelName')?.innerText.includes('ipykernel')"
               " && document.querySelector('.jp-Notebook-ExecutionIndicator')?.getAttribute('data-status') === 'idle'")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_served(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        assert server.poll() is None, f"JupyterLab exited: {log.read_text()[-2000:]}"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"JupyterLab did not serve {url} within {START_S} s: {log.read_text()[-2000:]}")


def test_an_experiment_notebook_runs_in_jupyterlab_in_chromium(tmp_path: Path, bootstrap: str) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copy(ROOT / "notebooks" / "batch.ipynb", folder)  # JupyterLab saves what it runs: never the project's copy
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "KPERF_DATA": str(tmp_path / "data"), "KPERF_BOOTSTRAP": bootstrap, "KPERF_PROFILE": "smoke",
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    log = tmp_path / "jupyterlab.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
             "--LabApp.extension_manager=readonly",  # no registry looked up for extensions
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}"],
            env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_served(f"{base}/api/status?token={token}", server, log)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(f"{base}/lab/tree/batch.ipynb?token={token}", timeout=START_S * 1000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=START_S * 1000)
            page.wait_for_function(KERNEL_IDLE, timeout=START_S * 1000)  # before its kernel, the page shows "idle" too
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
            # The sweep's progress bar (ipywidgets, drawn by JupyterLab) while it measures, then the figure.
            page.wait_for_selector(".jp-OutputArea-output .widget-hprogress .progress-bar", timeout=RUN_S * 1000)
            page.wait_for_selector(".jp-OutputArea-output img", timeout=RUN_S * 1000)
            page.wait_for_function(KERNEL_IDLE + " && !Array.from(document.querySelectorAll('.jp-InputPrompt'))"
                                   ".some(p => p.innerText.includes('*'))", timeout=RUN_S * 1000)
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']").all_inner_texts()
            figure = page.evaluate("(() => { const i = document.querySelector('.jp-OutputArea-output img');"
                                   " return [i.complete, i.naturalWidth]; })()")
            browser.close()
        assert errors == [], errors
        assert figure[0] and figure[1] > 0
        assert any((tmp_path / "data" / "runs").glob("*/results/batch-*.parquet"))  # measured and recorded
    finally:
        server.terminate()
        server.wait(timeout=30)
