"""Notebook execution with papermill (the executed copy, with its injected parameters, is the provenance), and the
report: the report notebook executed over a run's records, written as one self-contained HTML file and a Markdown twin."""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import nbformat
import papermill
from nbclient.exceptions import DeadKernelError
from nbconvert import HTMLExporter, MarkdownExporter
from traitlets.config import Config

from kperf.errors import KperfError, MeasurementFailed, UnitsFailed
from kperf.paths import data_dir, notebooks_dir
from kperf.study import runs
from kperf.study.kernel import Kernel

REPORT = "report"
COMPARE = "compare"


def execute(notebook: str, run_dir: Path, parameters: dict[str, Any], progress: bool = True,
            kernel: Kernel | None = None) -> Path:
    """Run ``notebooks/<notebook>.ipynb`` with ``parameters``; the executed copy goes into the run folder.

    ``progress``: papermill's bar of executed cells (the study shows its own bars instead). ``kernel``: a study's
    kernel shared by its notebooks (:mod:`kperf.study.kernel`); None, one of its own. A notebook's
    :class:`~kperf.errors.UnitsFailed` or :class:`~kperf.errors.MeasurementFailed` is raised again as itself; the
    executed copy is written either way."""
    source = notebooks_dir() / f"{notebook}.ipynb"
    if not source.is_file():
        raise KperfError(f"notebook {source} not found (set KPERF_NOTEBOOKS to the kperf notebooks folder)")
    output = run_dir / "notebooks" / f"{notebook}.ipynb"
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with kernel.lent() if kernel is not None else nullcontext() as manager:
            papermill.execute_notebook(str(source), str(output), parameters=parameters, cwd=str(source.parent),
                                       progress_bar=progress, km=manager)
    except papermill.PapermillExecutionError as exc:
        for failed in (UnitsFailed, MeasurementFailed):  # a measurement failed in the notebook: so it did here
            if exc.ename == failed.__name__:
                raise failed(f"notebook {notebook}: {exc.evalue} (see {output})", exc.ename) from None
        raise KperfError(f"notebook {notebook} failed at cell {exc.exec_count}: {exc.ename}: {exc.evalue} (see {output})") from None
    except DeadKernelError:  # killed, or crashed (its process's own output is on stderr)
        raise KperfError(f"notebook {notebook}: its kernel died while running it (see {output})") from None
    return output


def render_report(run_dir: Path, kernel: Kernel | None = None) -> Path:
    """Execute the report notebook over ``run_dir``'s records; write ``report.html`` and ``report.md`` beside them.

    Nothing is measured: ``kperf report`` regenerates both from what was recorded. ``kernel``: see :func:`execute`."""
    run_dir = runs.chosen(run_dir)
    return render(REPORT, run_dir, {"run_dir": str(run_dir)}, kernel=kernel)


def render_compare(run_a: Path, run_b: Path) -> Path:
    """Execute the compare notebook over two runs' records into ``data/compare/<A>-vs-<B>/``; write
    ``compare.html`` and ``compare.md`` there."""
    folder = data_dir() / "compare" / f"{run_a.name}-vs-{run_b.name}"
    folder.mkdir(parents=True, exist_ok=True)
    return render(COMPARE, folder, {"run_a": str(run_a), "run_b": str(run_b)})


def render(notebook: str, folder: Path, parameters: dict[str, Any], run_dir: Path | None = None,
           progress: bool = True, kernel: Kernel | None = None) -> Path:
    """Execute ``notebook`` with ``parameters``; write its HTML and Markdown twin into ``folder``.

    The executed copy goes into ``run_dir`` (default ``folder``): a study's capacity notebook sits with its other
    notebooks while its pages go with the capacity run's own records. ``progress``, ``kernel``: see :func:`execute`."""
    executed = nbformat.read(execute(notebook, run_dir or folder, parameters, progress, kernel), as_version=4)
    to_markdown(executed, folder / f"{notebook}.md")
    return to_html(executed, folder / f"{notebook}.html")


def to_html(notebook: nbformat.NotebookNode, html: Path) -> Path:
    """``notebook`` as HTML with the code hidden; figures are embedded, so the file stands alone."""
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(notebook)
    return runs.write_text(html, body)


# The Markdown twin takes an output's own Markdown (a table's pipe table) before its HTML.
MARKDOWN_FIRST = ["text/markdown", "image/png", "image/jpeg", "image/svg+xml", "text/html", "text/latex", "text/plain"]


def to_markdown(notebook: nbformat.NotebookNode, markdown: Path) -> Path:
    """``notebook`` as Markdown without code; its figures go to ``<name>_files/`` beside it."""
    exporter = MarkdownExporter(exclude_input=True, config=Config({"NbConvertBase": {"display_data_priority": MARKDOWN_FIRST}}))
    figures = markdown.parent / f"{markdown.stem}_files"
    body, resources = exporter.from_notebook_node(notebook, resources={"output_files_dir": figures.name})
    shutil.rmtree(figures, ignore_errors=True)
    if resources.get("outputs"):
        figures.mkdir()
    for name, data in resources.get("outputs", {}).items():
        (markdown.parent / name).write_bytes(data)
    return runs.write_text(markdown, body)
