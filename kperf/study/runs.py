"""Run folders, ``data/runs/<run id>/``: where one study, or one notebook run, keeps everything it made."""

from __future__ import annotations

import os
import secrets
from datetime import datetime
from pathlib import Path

from kperf.errors import KperfError
from kperf.paths import data_dir

STUDY_FILE = "study.json"  # what a study asked for: experiments, profile, overrides, cluster
CAPACITY = "capacity"  # the notebook that measures a study's workload (--workload), and the run folder's sub-folder it
# measures into (a capacity run folder of its own: records, capacity.json, capacity.html)
VERDICT_FILE = "capacity.json"  # what a capacity run found, in its folder
LOCAL, EXTERNAL = "local", "external"  # a run's env.cluster: kperf's own cluster, or another


def runs_dir() -> Path:
    return data_dir() / "runs"


def new_run_dir() -> Path:
    """A fresh run folder named by its start time (sortable) and a random suffix (unique)."""
    run = runs_dir() / f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    run.mkdir(parents=True)
    return run


def run_folder(run_dir: str | Path | None) -> Path:
    """The folder to write to: the one given (made if needed), or a new one."""
    if run_dir is None:
        return new_run_dir()
    path = Path(run_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def latest_run(with_results: bool = True) -> Path:
    """The most recent run folder that holds results (or, ``with_results=False``, any study's)."""
    pattern = "*/results/*.parquet" if with_results else f"*/{STUDY_FILE}"
    runs = sorted({p.parent.parent if with_results else p.parent for p in runs_dir().glob(pattern)})
    if not runs:
        what = "with results" if with_results else "of 'kperf study'"
        raise KperfError(f"no run {what} under {runs_dir()}: run 'kperf study' first")
    return runs[-1]


def chosen(run_dir: str | Path | None) -> Path:
    """The run an analysis reports on: the one given, else ``$KPERF_RUN_DIR``, else the latest with results."""
    if run_dir or os.environ.get("KPERF_RUN_DIR"):
        path = Path(run_dir or os.environ["KPERF_RUN_DIR"]).resolve()  # notebooks run in notebooks/
        if not path.is_dir():
            raise KperfError(f"{path}: no such folder" + ("" if run_dir else " (from $KPERF_RUN_DIR)"))
        if not any((path / "results").glob("*.parquet")):
            raise KperfError(f"{path} holds no results (expected Parquet files in {path / 'results'})")
        return path
    return latest_run()


def named(run: str | Path) -> Path:
    """A run given as a folder or as a run id under data/runs; an error naming it when it is neither."""
    path = Path(run)
    for candidate in (path, runs_dir() / path):
        if candidate.is_dir():
            return candidate.resolve()
    raise KperfError(f"no run {run}: neither a folder nor a run id under {runs_dir()}")


def write_text(path: Path, text: str) -> Path:
    """Replace a run-folder file atomically: a reader (or a crash) never leaves half of it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
