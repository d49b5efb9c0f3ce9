"""The study: experiment notebooks, then the report notebook, executed by papermill into a run folder.

A run folder, ``data/runs/<run id>/``, holds everything a run produced: the
executed notebooks with their injected parameters (the provenance), the result
records under ``results/``, and ``report.html``.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from kperf import report
from kperf.errors import KperfError
from kperf.notebooks import execute
from kperf.paths import data_dir
from kperf.profiles import resolve_profile
from kperf.target import connect

EXPERIMENTS = ("batch",)  # one notebook each, notebooks/<name>.ipynb, run in this order


def runs_dir() -> Path:
    return data_dir() / "runs"


def new_run_dir() -> Path:
    """A fresh run folder named by its start time (sortable) and a random suffix (unique)."""
    run = runs_dir() / f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    run.mkdir(parents=True)
    return run


def run_folder(run_dir: str | Path | None) -> Path:
    """The folder an experiment notebook writes to: the one given, or a new one."""
    if run_dir is None:
        return new_run_dir()
    path = Path(run_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def latest_run() -> Path:
    """The most recent run folder that holds results."""
    runs = sorted(p.parent.parent for p in runs_dir().glob("*/results/*.parquet"))
    if not runs:
        raise KperfError(f"no run with results under {runs_dir()}: run 'kperf study' first")
    return runs[-1]


def check_experiments(names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise KperfError(f"unknown experiment {unknown[0]!r}: choose from {', '.join(EXPERIMENTS)}")
    return list(names) or list(EXPERIMENTS)


def run(experiments: Sequence[str] = (), profile: str | None = None, bootstrap: str | None = None) -> Path:
    """Run the named experiments (all by default) and the report; returns the report's path.

    Without ``bootstrap`` the local cluster is used: a running one is reused,
    otherwise one is started for the study and stopped after it.
    """
    names = check_experiments(experiments)
    profile = resolve_profile(profile)
    with connect(bootstrap) as target:
        run_dir = new_run_dir()
        print(f"kperf: run folder {run_dir}")
        for i, name in enumerate(names, 1):
            print(f"kperf: [{i}/{len(names)}] experiment {name} ({profile} profile) against {target.bootstrap}")
            execute(name, run_dir, {"bootstrap": target.bootstrap, "run_dir": str(run_dir), "profile": profile})
    return report.render(run_dir)
