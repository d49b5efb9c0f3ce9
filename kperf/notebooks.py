"""Notebook execution with papermill: the executed copy, with its injected parameters, is the provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import papermill

from kperf.errors import KperfError
from kperf.paths import notebooks_dir


def execute(notebook: str, run_dir: Path, parameters: dict[str, Any], progress: bool = True) -> Path:
    """Run ``notebooks/<notebook>.ipynb`` with ``parameters``; the executed copy goes into the run folder.

    ``progress``: papermill's bar of executed cells (the study shows its own bars instead)."""
    source = notebooks_dir() / f"{notebook}.ipynb"
    if not source.is_file():
        raise KperfError(f"notebook {source} not found (set KPERF_NOTEBOOKS to the kperf notebooks folder)")
    output = run_dir / "notebooks" / f"{notebook}.ipynb"
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(source), str(output), parameters=parameters, cwd=str(source.parent), progress_bar=progress
        )
    except papermill.PapermillExecutionError as exc:
        raise KperfError(f"notebook {notebook} failed at cell {exc.exec_count}: {exc.ename}: {exc.evalue} (see {output})") from None
    return output
