"""The report: an executed notebook turned into one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
from nbconvert import HTMLExporter

from kperf import stats
from kperf.errors import KperfError
from kperf.notebooks import execute

NOTEBOOK = "report"


def to_html(executed_notebook: Path, html: Path) -> Path:
    """Write ``executed_notebook`` as HTML with the code hidden; figures are embedded, so the file stands alone."""
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nbformat.read(executed_notebook, as_version=4))
    tmp = html.with_name(f".{html.name}.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(html)
    return html


def render(run_dir: Path) -> Path:
    """Execute the report notebook over ``run_dir``'s records and write ``report.html`` beside them."""
    run_dir = Path(run_dir)
    if not any((run_dir / "results").glob("*.parquet")):
        raise KperfError(f"{run_dir} holds no results to report on")
    executed = execute(NOTEBOOK, run_dir, {"run_dir": str(run_dir)})
    return to_html(executed, run_dir / "report.html")


TITLES = {
    "batch": "Producer batch.size and linger.ms",
    "throughput": "Offered load: throughput and latency",
    "partitions": "Partition count",
    "threads": "Producer and consumer processes",
    "codecs": "Compression codecs",
    "replication": "Replication factor and acks",
    "message_size": "Record size",
    "end_to_end": "End-to-end latency",
}


def batch_findings(batch: pd.DataFrame) -> str:
    """The batch.size answer in a sentence, from the batch experiment's records (unthrottled, Python client)."""
    rows = batch[(batch["role"] == "producer") & (batch["param.rate"] == -1) & (batch["param.client"] == "python")]
    if rows.empty:
        return "The batch experiment has no unthrottled Python producer points."
    summary = stats.summarize(rows, ["param.batch.size", "param.linger.ms"])
    best = summary.loc[summary["median"].idxmax()]
    smallest = summary.loc[summary["param.batch.size"].idxmin()]
    unstable = summary.loc[summary["unstable"], "param.batch.size"].tolist()
    text = (
        f"The highest producer throughput was at batch.size={int(best['param.batch.size'])} bytes, "
        f"linger.ms={int(best['param.linger.ms'])}: {best['median']:,.0f} records/s (median of {int(best['n'])}"
        + (f", 95% CI {best['ci95_low']:,.0f}-{best['ci95_high']:,.0f})" if best["n"] > 1 else ")")
        + f", {best['median'] / smallest['median']:.1f}x the {smallest['median']:,.0f} records/s "
        f"of the smallest batch.size ({int(smallest['param.batch.size'])} bytes)."
    )
    if unstable:
        text += f" Unstable points (repeats vary by more than 10%): batch.size {', '.join(map(str, sorted(set(unstable))))}."
    return text
