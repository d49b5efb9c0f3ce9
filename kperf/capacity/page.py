"""The capacity page, what the capacity notebook shows (``capacity.html``): the verdict first, then how the search got
there and the sustain phase's windows; and the verdict a study's report opens with."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from kperf.analysis import recommend, report
from kperf.capacity import run, search, sizing_section, verdict
from kperf.results import ResultStore, succeeded
from kperf.study import runs


def load(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((Path(folder) / run.VERDICT_FILE).read_text())
    return found


def verdict_table(found: dict[str, Any]) -> Any:
    """The verdict table, whole (no cut cells, no index)."""
    table = pd.DataFrame(verdict.table(found), columns=["", "measured", "verdict"])
    return table.style.hide(axis="index").set_properties(**{"text-align": "left"})


def search_table(found: dict[str, Any]) -> pd.DataFrame:
    """Each decision of the search: its rate, outcome and the trials' margins (log measured / bound of the worst SLO)."""
    decisions = found.get("headroom", {}).get("decisions", [])
    return pd.DataFrame([{"rate (records/s)": round(d["rate"]), "x target": round(d["rate"] / found["workload"]["target_rate"], 2),
                          "outcome": d["outcome"], "trials": len(d["margins"]),
                          "worst SLO, measured / bound": ", ".join(_margin(m) for m in d["margins"])} for d in decisions])


def _margin(m: float) -> str:
    """A trial's margin (log measured / bound) in words: +inf is records lost, NaN not measured, -inf nothing."""
    if math.isnan(m):
        return "not measured"
    return "lost records" if m == math.inf else f"{math.exp(m):.2f}"


def search_figure(found: dict[str, Any]) -> plt.Figure | None:
    """Every headroom trial: its worst SLO's measured / bound against the rate; the limit's interval shaded."""
    headroom = found.get("headroom")
    if not headroom or not headroom["decisions"]:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    colours = {search.HOLDS: "tab:green", search.FAILS: "tab:red", search.UNCLEAR: "tab:orange"}
    for d in headroom["decisions"]:
        ratios = [min(math.exp(m), 100.0) if not math.isinf(m) else 100.0 for m in d["margins"]]
        ax.scatter([d["rate"]] * len(ratios), ratios, color=colours[d["outcome"]], label=d["outcome"], zorder=3)
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.axvline(headroom["target"], color="grey", lw=0.8, ls=":", label="target")
    if headroom.get("low") is not None and headroom.get("high") is not None:
        ax.axvspan(headroom["low"], headroom["high"], color="tab:blue", alpha=0.12, label="limit's interval")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), fontsize=8)
    ax.set(xscale="log", yscale="log", xlabel="offered rate (records/s)", ylabel="worst SLO: measured / bound",
           title="The headroom search, trial by trial")
    fig.tight_layout()
    return fig


def sustain_figure(folder: Path) -> plt.Figure | None:
    """The sustain phase's producer, window by window: records/s and its p99 latency from the intended send time."""
    store = ResultStore.of_run(folder)
    records = succeeded(store.load())
    if records.empty:
        return None
    sustain = records[(records["param.phase"] == run.SUSTAIN) & (records["role"] == "producer")]
    if sustain.empty:
        return None
    streams = sustain.groupby("param.stream", sort=False).tail(1) if "param.stream" in sustain else sustain.tail(1)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.5), sharex=True)
    drawn = False
    for _, row in streams.iterrows():
        windows = store.series(row.to_dict())
        if windows.empty:
            continue
        label = row.get("param.stream") or None  # a topic's name, with several
        top.plot(windows["start_s"], windows["records_per_s"], label=label)
        if "latency_p99_ms" in windows:
            bottom.plot(windows["start_s"], windows["latency_p99_ms"], label=label)
        drawn = True
    if not drawn:
        plt.close(fig)
        return None
    top.set(ylabel="records/s", title="Sustain: the producers, window by window")
    bottom.set(ylabel="p99 latency (ms)", xlabel="seconds")
    if len(streams) > 1:
        top.legend(fontsize=8)
    fig.tight_layout()
    return fig


def verdict_first(run_dir: Path, results: pd.DataFrame) -> list[object]:
    """What a study's report opens with when the study measured a workload (``kperf study --workload``): the verdict's
    sentence and table, and the setting advice this run's experiments give for it; nothing otherwise."""
    folder = Path(run_dir) / runs.CAPACITY
    if not (folder / run.VERDICT_FILE).is_file():
        return []
    found = load(folder)
    items: list[object] = [Markdown(f"## Can this cluster carry {found['workload']['name']}?"),
                           Markdown(f"**{verdict.sentence(found)}**"), verdict_table(found)]
    advice = [f"- {stream['name'] + ': ' if stream['name'] else ''}{a.sentence()}"  # a topic's own producer settings
              for stream in found["workload"]["settings"]["streams"]
              for a in recommend.recommend(results, stream["producer_config"])]
    if advice:
        items.append(Markdown(
            "Settings, from this run's experiments (their own records, python producer, unthrottled; the ratio's 95% "
            "interval as `kperf compare` gives it; a capacity run with the new setting is the proof):\n\n"
            + "\n".join(advice)))
    items += sizing_section.items(folder, found)
    items.append(Markdown(f"How the limit was found, and the sustain phase: [{runs.CAPACITY}/capacity.html]"
                          f"({runs.CAPACITY}/capacity.html)."))
    return items


def show(folder: Path) -> None:
    """The whole capacity report, in order."""
    found = load(folder)
    env = found["environment"]
    display(Markdown(f"**{verdict.sentence(found)}**"))
    display(verdict_table(found))
    display(Markdown(
        f"Workload `{found['workload']['name']}` ({found['workload'].get('source') or 'a workload file'}), measured "
        f"{found['started']} against {env['cluster']} Kafka {env['kafka_version']} ({env['brokers']} broker(s)) from "
        f"{env['host']} ({env['cpu_count']} cores). Each SLO's interval, where given, is the 95% batch-means interval "
        "of the windows' own figure; the limit is an interval between the highest rate confirmed to hold every SLO "
        "and the lowest confirmed to fail one (docs/workload.md says how a decision is confirmed)."))
    table = search_table(found)
    if not table.empty:
        display(Markdown("### How the limit was found"), table.style.hide(axis="index").format(precision=2))
        figure = search_figure(found)
        if figure is not None:
            display(figure)
            plt.close(figure)
    figure = sustain_figure(Path(folder))
    if figure is not None:
        display(Markdown("### The sustain phase"), figure)
        plt.close(figure)
    for item in sizing_section.items(Path(folder), found):
        display(item)
    report.show(report.failed_units_section(ResultStore.of_run(folder).load()))
