"""Each experiment's figure, shared by its own notebook and the report (its tables: :mod:`kperf.analysis.per_point`).

An experiment's view is its list of panels (``Experiment.panels``): which rows (role), what against what, and which
parameters tell the lines apart (client, and what else the grid crosses).
Every panel draws the median of the repeats, with an error bar spanning them
(min to max), so the spread stays visible; fitted curves (each experiment's ``analyze``)
are drawn dashed on the panel they belong to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from kperf import limits
from kperf.results import ResultStore, succeeded, with_derived
from kperf.study import experiment
from kperf.study.experiment import Panel
from kperf.study.finding import Curve

SPREAD = ("pi", 100)  # seaborn's percentile interval 0-100: the error bar spans every repeat
PALETTE = "colorblind"  # seaborn's colour-blind-safe palette (Okabe-Ito-like), for every figure
COLOURS = sns.color_palette(PALETTE)
GUIDE: dict[str, Any] = {"color": "grey", "linewidth": 0.9, "linestyle": ":"}  # reference lines: rate caps, offered = achieved, peaks


LABELS = {
    "records_per_s": "records/s",
    "mib_per_s": "MiB/s",
    "compression_ratio": "bytes sent / bytes on disk (per replica)",
    "res.client_cpu_pct": "client CPU % (100 = one core)",
    "res.broker_cpu_pct": "broker CPU % (all brokers)",
    "param.batch.size": "batch.size (bytes)",
    "param.rate": "offered load (records/s)",
    "param.partitions": "partitions",
    "param.producers": "producer processes",
    "param.consumers": "consumer processes",
    "param.compression.type": "compression.type",
    "param.replication_factor": "replication factor",
    "param.record_size": "record size (bytes)",
    "param.acks": "acks",
    "acked_lost": "acknowledged records lost",
    "no_ack_s": "longest wait for an ack per partition (s)",
    "isr_recovery_s": "fault's end to full ISR (s)",
    "p99_during_fault_ms": "intended-time p99 during the fault (ms)",
    "recovery_s": "fault's end to calm latency (s)",
    "param.fault": "fault",
    "param.fault_s": "fault length (s)",
}

ACK_KINDS = {"ack": "send-to-ack", "intended": "intended-send-to-ack", "e2e": "end-to-end"}


def label(column: str) -> str:
    """A column's axis label: a fixed one, or latency columns spelled out."""
    if column in LABELS:
        return LABELS[column]
    if column.startswith("latency_"):
        _, kind, stat, _ = column.split("_")
        return f"{stat} {ACK_KINDS.get(kind, kind)} latency (ms)"
    return column


def rows(results: pd.DataFrame, panel: Panel) -> pd.DataFrame:
    """The rows one panel plots, with derived columns and a ``series`` label."""
    table = with_derived(succeeded(results))  # a failed unit is no point
    if panel.y not in table:
        return table.iloc[0:0]
    if panel.role != "latency":  # "latency": whichever rows carry it, consumer or stock end-to-end tool
        table = table[table["role"] == panel.role]
    for column, value in panel.where:
        table = table[table[column] == value] if column in table else table.iloc[0:0]
    table = table.dropna(subset=[panel.y])
    if table.empty:
        return table
    series = [c for c in panel.series if c in table]
    if not series:
        return table.assign(series="")
    return table.assign(
        series=table[series].apply(lambda row: ", ".join(series_label(c, v) for c, v in row.items()), axis=1)
    )


def series_label(column: str, value: object) -> str:
    """``python``, ``rate=unthrottled``, ``linger.ms=5``: what tells one line from another."""
    name = column.removeprefix("param.")
    if name == "client":
        return str(value)
    if name == "rate" and value == -1:
        return "unthrottled"
    return f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"


def figure(name: str, results: pd.DataFrame, curves: Sequence[Curve] = ()) -> plt.Figure:
    """The experiment's panels: median of the repeats with a bar over their range, one line per series,
    and the fitted ``curves`` (dashed) on their panels."""
    panels = [p for p in experiment.get(name).panels if not rows(results, p).empty]
    columns = min(3, max(1, len(panels)))
    lines = max(1, -(-len(panels) // columns))
    fig, axes = plt.subplots(lines, columns, figsize=(5.2 * columns, 3.8 * lines), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        data = rows(results, panel)
        if panel.categorical:
            sns.pointplot(data=data, x=panel.x, y=panel.y, hue="series", estimator="median", errorbar=SPREAD,
                          linestyles="none", capsize=0.1, palette=PALETTE, ax=ax)
        else:
            sns.lineplot(data=data, x=panel.x, y=panel.y, hue="series", estimator="median", errorbar=SPREAD,
                         err_style="bars", err_kws={"capsize": 3}, marker="o", palette=PALETTE, ax=ax)
            guides(ax, data, panel)
        for curve in curves:
            if (curve.role, curve.x, curve.y) == (panel.role, panel.x, panel.y):
                ax.plot(curve.xs, curve.ys, linestyle="--", linewidth=1, color="black", label=curve.label)
                peak(ax, curve)
        ax.set(xlabel=label(panel.x), ylabel=label(panel.y), title=panel.role)
        if panel.log_x:
            ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        handles, _ = ax.get_legend_handles_labels()
        if len(handles) > 1:
            ax.legend(fontsize="small")
        elif ax.get_legend() is not None:
            ax.get_legend().remove()
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def guides(ax: plt.Axes, data: pd.DataFrame, panel: Panel) -> None:
    """The partition count on a panel of consumers (a consumer group's members past it stay idle; a share group's
    need not), and the rate caps on a records/s panel: offered = achieved when the x axis is the offered rate,
    else a dotted line at each cap the points were paced to."""
    if panel.x == "param.consumers" and "param.partitions" in data:
        for count in sorted(data["param.partitions"].dropna().unique()):
            ax.axvline(count, **GUIDE)
            ax.annotate(f"P={count:g} partitions", (count, 0.02), xycoords=("data", "axes fraction"), fontsize="x-small",
                        color="grey", rotation=90, ha="right", va="bottom")
    if panel.y != "records_per_s" or "param.rate" not in data:
        return
    caps = sorted(c for c in data["param.rate"].dropna().unique() if c > 0)
    if panel.x == "param.rate" and caps:
        ax.plot([caps[0], caps[-1]], [caps[0], caps[-1]], **GUIDE, label="offered = achieved")
        return
    for cap in caps:
        ax.axhline(cap, **GUIDE)
        ax.annotate(f"rate cap {cap:,.0f}/s", (0.01, cap), xycoords=("axes fraction", "data"), fontsize="x-small",
                    color="grey", va="bottom")


def peak(ax: plt.Axes, curve: Curve) -> None:
    """A fitted curve's peak N*, where it lies inside the measured range (the USL's retrograde scaling)."""
    top = max(range(len(curve.ys)), key=curve.ys.__getitem__)
    if 0 < top < len(curve.ys) - 1:
        ax.axvline(curve.xs[top], **GUIDE)
        ax.annotate(f"peak N*={curve.xs[top]:.1f}", (curve.xs[top], 0.02), xycoords=("data", "axes fraction"),
                    fontsize="x-small", color="grey", rotation=90, ha="right", va="bottom")


def caption(name: str, results: pd.DataFrame) -> str:
    """One line under an experiment's figure: what it draws and what to look at."""
    panels = [p for p in experiment.get(name).panels if not rows(results, p).empty]
    drawn = "; ".join(dict.fromkeys(f"{label(p.y)} against {label(p.x)}" for p in panels))
    return (f"*Figure: {drawn}. Dots: the median of the repeats, bars: their range; dashed: a fitted model; dotted: "
            "rate caps and peaks. Look for where a line levels off or turns down, and whether bars overlap.*")


def series_figure(results: pd.DataFrame, store: ResultStore) -> plt.Figure | None:
    """The time series (records/s per window) of the units with the highest and the lowest steady rate, per role,
    with their steady windows shaded, and below them what they used window by window (the busiest client process
    and the whole host, 100% = one core, with the 80%-of-capacity lines :mod:`kperf.limits` judges by); None when
    no record has a series (records before schema 3)."""
    if "series_file" not in results or "steady_records_per_s" not in results:
        return None
    rows = results.dropna(subset=["series_file", "steady_records_per_s"])
    if rows.empty:
        return None
    roles = list(dict.fromkeys(rows["role"]))
    fig, axes = plt.subplots(2, len(roles), figsize=(5.2 * len(roles), 5.6), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": (3, 2)})
    for (rate_ax, cpu_ax), role in zip(axes.T, roles):
        mine = rows[rows["role"] == role]
        picked = {mine["steady_records_per_s"].idxmax(): "highest", mine["steady_records_per_s"].idxmin(): "lowest"}
        for (index, which), colour in zip(picked.items(), COLOURS):  # one entry if they are one
            row = mine.loc[index]
            windows = store.series(row.to_dict())
            label = f"{which}: {row['point']} ({row['param.client']}, repeat {row['repeat']})"
            rate_ax.step(windows["start_s"], windows["records_per_s"], where="post", color=colour, label=label)
            rate_ax.axvspan(row["steady_start_s"], row["steady_end_s"], color=colour, alpha=0.12)
            for column, style in (("res.client_cpu_pct_busiest", "-"), ("res.host_cpu_pct", ":")):
                if column in windows:
                    cpu_ax.step(windows["start_s"], windows[column], where="post", color=colour, linestyle=style)
        rate_ax.set(ylabel="records/s per window", title=f"{role}: steady part shaded")
        rate_ax.set_ylim(bottom=0)
        rate_ax.legend(fontsize="x-small")
        cores = float(mine["env.cpu_count"].iloc[0]) if "env.cpu_count" in mine else 1.0
        busy = f"{limits.BUSY:.0%}"
        for level, words in ((100 * limits.BUSY, f"{busy} of a core"), (100 * limits.BUSY * cores, f"{busy} of the host")):
            cpu_ax.axhline(level, color="grey", linewidth=0.8, linestyle="--")
            cpu_ax.annotate(words, (0, level), xycoords=("axes fraction", "data"), fontsize="x-small", color="grey",
                            va="bottom")
        cpu_ax.set(xlabel="seconds from the start", ylabel="CPU % (100 = one core)",
                   title="busiest client process (solid), host (dotted)")
        cpu_ax.set_ylim(bottom=0)
    fig.tight_layout()
    return fig
