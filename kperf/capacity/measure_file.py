"""A workload file measured against a cluster, and its page: the one way ``kperf capacity`` and the capacity notebook
(run alone or by ``kperf study --workload``) both measure one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from kperf.capacity import run, workload
from kperf.kafka.target import connect
from kperf.paths import project_root
from kperf.study import runs

EXAMPLE = Path("examples") / "smoke.yaml"  # what the capacity notebook measures when given no file


def measure_file(path: str | Path | None, bootstrap: str | None = None, folder: str | Path | None = None,
                 join_timeout_s: float | None = None) -> tuple[Path, dict[str, Any]]:
    """Connect to ``bootstrap`` (None: $KPERF_BOOTSTRAP or the local cluster), check the file at ``path`` (None: the
    project's :data:`EXAMPLE`) against its live brokers, and measure it into ``folder`` (None: a new capacity run
    folder; a study's: its run folder's ``capacity/``), its consumer groups' join bound ``join_timeout_s`` when given
    (else the file's). Returns the folder and the verdict."""
    path = Path(path) if path is not None else (project_root() or Path.cwd().parent) / EXAMPLE
    with connect(bootstrap) as target:
        found = workload.load(path, live_brokers=target.brokers)
        if join_timeout_s is not None:
            found = replace(found, join_timeout_s=join_timeout_s)
        return run.measure(target, found, str(path), None if folder is None else Path(folder))


def render(folder: Path) -> Path:
    """The capacity page over what was measured into ``folder`` (the capacity notebook, measuring nothing then):
    ``capacity.html`` and its Markdown twin there."""
    from kperf.study import notebooks  # papermill and nbconvert: loaded once there is something to show

    return notebooks.render(runs.CAPACITY, folder, {"run_dir": str(folder)}, progress=False)
