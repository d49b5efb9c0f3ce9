"""The published studies kperf reproduces, shipped with the package, and how this run compares with them.

``published_data/series.csv`` holds the numeric tables of the studies (S1, S2) as
published, with their conditions; ``published_data/claims.csv`` the conclusions of
those that printed no numbers (S3's codec charts, S4's replication), each
checked on this run among the settings the study compared. Different
hardware makes absolute numbers incomparable, so series are compared by shape:
each normalized to its own peak, classified (rising, levels off, peaks then
falls, falling, flat), and the peak's location stated for both.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from kperf.analysis.plots import PALETTE, label
from kperf.results import with_derived

FLAT = 0.95  # a series whose lowest median is within 5% of its highest is flat
# Our rows comparable with a study's: S1.1 was capped at 30,000 records/s, so only our capped batch points.
OURS = {"S1.1": "`param.rate` > 0"}


@cache
def series() -> pd.DataFrame:
    return pd.read_csv(files("kperf.analysis") / "published_data" / "series.csv")


@cache
def claims() -> pd.DataFrame:
    return pd.read_csv(files("kperf.analysis") / "published_data" / "claims.csv")


@cache
def notes() -> dict[str, str]:
    """Each study's known mistakes or caveats, by study, as the seed studies' notes state them."""
    table = pd.read_csv(files("kperf.analysis") / "published_data" / "notes.csv")
    return dict(zip(table["study"], table["note"]))


def side_by_side(experiment: str, results: pd.DataFrame) -> list[tuple[str, pd.DataFrame, str]]:
    """Per published series of ``experiment``: a title, its numbers beside this run's at the same x (the Python
    client's median records/s on the comparable rows; empty where this run did not measure that x), and a note
    of both conditions and the study's known mistakes."""
    env = results.iloc[-1] if len(results) else pd.Series(dtype=object)
    ours_conditions = (f"this run: Kafka {env.get('env.kafka_version', 'unknown')}, {env.get('env.brokers', '?')} "
                       f"broker(s) on a {env.get('env.cluster', '?')} cluster of {env.get('env.cpu_count', '?')} CPU cores")
    tables = []
    for (study, role, x), theirs in series()[series()["experiment"] == experiment].groupby(["study", "role", "x"]):
        ours = _ours(results, study, role, x).rename(columns={"records_per_s": "this run records/s"})
        table = (theirs[["x_value", "records_per_s"]].rename(columns={"x_value": x, "records_per_s": f"{study} records/s"})
                 .merge(ours, on=x, how="outer").sort_values(x, ignore_index=True).rename(columns={x: label(x)}))
        note = f"{study}: {theirs['conditions'].iloc[0]}. {notes().get(study, '')} Compared with {ours_conditions}."
        tables.append((f"{study} and this run: {role} records/s against {label(x)}", table, note))
    return tables


def shape(x: pd.Series, y: pd.Series) -> str:
    """How a series moves across its x range, in words that survive a change of hardware."""
    order = np.argsort(x.to_numpy())
    values = y.to_numpy(dtype=float)[order]
    peak = int(np.argmax(values))
    if values.min() >= FLAT * values.max():
        return "flat"
    if peak == len(values) - 1:
        return "rising"
    if peak == 0:
        return "falling"
    return "levels off" if values[-1] >= FLAT * values[peak] else "peaks then falls"


def _ours(results: pd.DataFrame, study: str, role: str, x: str, over: pd.Series | None = None) -> pd.DataFrame:
    """Median records/s per x of this run's Python client, on the rows comparable with ``study``; with
    ``over``, only the x values covering that range (from the last at or below its start to the first at
    or above its end), so both shapes describe the same stretch of load."""
    rows = results[(results["role"] == role) & (results["param.client"] == "python")]
    if study in OURS and not rows.empty:
        rows = rows.query(OURS[study])
    if rows.empty or x not in rows:
        return pd.DataFrame(columns=[x, "records_per_s"])
    medians = rows.groupby(x, as_index=False)["records_per_s"].median()
    if over is not None:
        xs = medians[x]
        low = xs[xs <= over.min()].max() if (xs <= over.min()).any() else xs.min()
        high = xs[xs >= over.max()].min() if (xs >= over.max()).any() else xs.max()
        medians = medians[(xs >= low) & (xs <= high)]
    return medians


def comparisons(experiment: str, results: pd.DataFrame) -> list[str]:
    """One sentence per published series or claim of ``experiment``: theirs, ours, and whether they agree."""
    sentences = []
    for (study, role, x), theirs in series()[series()["experiment"] == experiment].groupby(["study", "role", "x"]):
        ours = _ours(results, study, role, x, over=theirs["x_value"])
        what = f"{role} records/s against {label(x)}"
        if len(ours) < 3:
            sentences.append(f"{study} ({what}): this run has too few points to compare shapes.")
            continue
        mine, published = shape(ours[x], ours["records_per_s"]), shape(theirs["x_value"], theirs["records_per_s"])
        peak_theirs = theirs.loc[theirs["records_per_s"].idxmax(), "x_value"]
        peak_ours = ours.loc[ours["records_per_s"].idxmax(), x]
        sentences.append(
            f"{study} ({what}, {theirs['x_value'].min():g}-{theirs['x_value'].max():g}): {published}, peak at "
            f"{peak_theirs:g}. This run, at {ours[x].min():g}-{ours[x].max():g} (the points covering that range): "
            f"{mine}, peak at {peak_ours:g}. "
            + ("The shapes agree." if mine == published else "The shapes differ.")
        )
    derived = with_derived(results)
    for claim in claims()[claims()["experiment"] == experiment].itertuples():
        rows = derived[(derived["role"] == claim.role) & (derived["param.client"] == "python")]
        if claim.metric not in rows or rows[claim.metric].isna().all():
            sentences.append(f"{claim.study}: {claim.claim}. This run did not measure {label(claim.metric)}.")
            continue
        if isinstance(claim.among, str):  # the settings the study compared (S3 had no "none")
            rows = rows[rows[claim.by].astype(str).isin(claim.among.split())]
        medians = rows.groupby(claim.by)[claim.metric].median()
        best = medians.idxmax() if claim.direction == "highest" else medians.idxmin()
        sentences.append(
            f"{claim.study}: {claim.claim}. Here the {claim.direction} {claim.role} {label(claim.metric)} "
            f"(median) was at {label(claim.by)} {best}: " + ("agrees." if str(best) == str(claim.best) else "differs.")
        )
    return sentences


def figure(experiment: str, results: pd.DataFrame) -> plt.Figure | None:
    """Each published series of ``experiment`` beside this run's, both as a share of their own peak."""
    published = series()[series()["experiment"] == experiment]
    groups = list(published.groupby(["study", "role", "x"]))
    if not groups:
        return None
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 3.6), squeeze=False)
    for ax, ((study, role, x), theirs) in zip(axes.flat, groups):
        ours = _ours(results, study, role, x, over=theirs["x_value"])
        lines = [theirs.assign(source=study, share=theirs["records_per_s"] / theirs["records_per_s"].max())
                 .rename(columns={"x_value": x})]
        if not ours.empty:
            lines.append(ours.assign(source="this run (python)", share=ours["records_per_s"] / ours["records_per_s"].max()))
        sns.lineplot(data=pd.concat(lines, ignore_index=True), x=x, y="share", hue="source", marker="o", palette=PALETTE,
                     ax=ax)
        ax.set(xlabel=label(x), ylabel="records/s, share of own peak", title=f"{study}: {role}", ylim=(0, 1.05))
        if x in ("param.rate", "param.batch.size", "param.record_size"):
            ax.set_xscale("log")
    fig.tight_layout()
    return fig
