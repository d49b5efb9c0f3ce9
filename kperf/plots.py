"""Figures shared by the experiment and report notebooks."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

LABELS = {
    "records_per_s": "records/s",
    "mib_per_s": "MiB/s",
    "latency_ack_p99_ms": "p99 send-to-ack latency (ms)",
    "param.batch.size": "batch.size (bytes)",
}


def sweep(results: pd.DataFrame, x: str, ys: tuple[str, ...] = ("records_per_s", "latency_ack_p99_ms"), log_x: bool = True) -> plt.Figure:
    """One panel per measure against ``x``: the median of repeats, each repeat as a dot."""
    fig, axes = plt.subplots(1, len(ys), figsize=(5.5 * len(ys), 4), squeeze=False)
    for ax, y in zip(axes[0], ys):
        sns.lineplot(data=results, x=x, y=y, estimator="median", errorbar=None, marker="o", ax=ax)
        sns.scatterplot(data=results, x=x, y=y, alpha=0.35, color="grey", ax=ax, legend=False)
        ax.set(xlabel=LABELS.get(x, x), ylabel=LABELS.get(y, y))
        if log_x:
            ax.set_xscale("log")
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    return fig
