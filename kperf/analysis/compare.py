"""Two runs compared, point by point: did a change (a broker or client setting, a Kafka upgrade) make them faster?

For every point both runs measured (same experiment, point, client and role)
the ratio B/A of the mean rate over the repeats gets a 95% interval, and a
verdict from it: *faster* or *slower* when the interval excludes 1, else *no
significant change*. Each run's mean and its standard error come from the same
statistics as its precision (:func:`kperf.precision.mean_error`: Student's t over
the repeats, or pooled over their batch means when they agree within their own
windows' noise; one repeat from its batch-means interval). The ratio's
interval is Welch's on the logarithm of the means (the delta method:
var(log m) = se^2 / m^2), with Satterthwaite's degrees of freedom, so it is
not symmetric and never reaches zero. The steady rates are compared when every
repeat of both runs has one, else the whole runs' rates. Each verdict is at the
5% level, point by point: among twenty points that did not change, about one
is expected to be called changed by chance.

Failed units (:func:`kperf.results.succeeded`) are left out: a point whose
repeats all failed in either run is *not tested*, with the failure as its
reason, as is one without an interval or a run's point the other lacks. The
command's exit (:func:`exit_code`) gates a pipeline: a point significantly
slower by more than a threshold factor (asv's ``--factor``), or no point
tested at all.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from scipy import stats as scipy_stats

from kperf import precision, steady
from kperf.analysis import stats
from kperf.errors import KperfError
from kperf.exits import Exit
from kperf.results import FAILED, UNIT, ResultStore, succeeded
from kperf.study import runs

LEVEL = 0.95
FASTER, SLOWER, SAME, UNTESTED = "faster", "slower", "no significant change", "not tested"
ONLY_A, ONLY_B = "only in A", "only in B"
TESTED = (FASTER, SLOWER, SAME)
NO_INTERVAL, NO_RATE = "one repeat without an interval", "a rate of zero"
BROKEN = "measured in A, failed in B"  # not tested, but worse: the change broke the point
# Conditions that make two runs' numbers differ for reasons other than the change under test (environment.json).
CONDITIONS = {"kafka_version": "Kafka version", "kafka_release": "Kafka release of the stock tools",
              "lock_sha256": "dependency lock (sha256)", "broker_config": "broker settings", "host": "host",
              "cpu_count": "CPU cores", "memory_gib": "memory (GiB)", "platform": "platform", "python": "Python",
              "confluent_kafka": "confluent-kafka", "librdkafka": "librdkafka", "cluster": "cluster",
              "brokers": "brokers", "bootstrap": "bootstrap servers", "security_protocol": "security protocol",
              "sasl_mechanism": "SASL mechanism", "kperf": "kperf", "api_versions": "API versions the cluster answers",
              "features": "the cluster's finalized feature levels"}


@dataclass(frozen=True)
class Estimate:
    """One run's mean rate at a point: the mean of its repeats, its standard error and degrees of freedom."""

    mean: float
    error: float  # NaN: no interval (one repeat without a steady interval)
    freedom: float
    repeats: int


@dataclass(frozen=True)
class Ratio:
    """B/A with its interval and what it says."""

    ratio: float
    low: float
    high: float
    verdict: str
    why: str = ""  # why it was not tested


def ratio(a: Estimate, b: Estimate, level: float = LEVEL) -> Ratio:
    """B/A and its ``level`` interval: Welch's on log(B) - log(A), the delta method's variance per side; not tested
    when a side has no positive rate (no ratio of zeros) or no interval."""
    if not (a.mean > 0 and b.mean > 0):
        return Ratio(math.nan, math.nan, math.nan, UNTESTED, NO_RATE)
    value = b.mean / a.mean
    if not (math.isfinite(a.error) and math.isfinite(b.error)):
        return Ratio(value, math.nan, math.nan, UNTESTED, NO_INTERVAL)
    va, vb = (a.error / a.mean) ** 2, (b.error / b.mean) ** 2
    if va + vb == 0:  # no spread on either side (a run against itself with one repeat per point, say)
        return Ratio(value, value, value, SAME if value == 1 else FASTER if value > 1 else SLOWER)
    freedom = (va + vb) ** 2 / (va**2 / a.freedom + vb**2 / b.freedom)
    half = float(scipy_stats.t.ppf(0.5 + level / 2, freedom)) * math.sqrt(va + vb)
    low, high = value * math.exp(-half), value * math.exp(half)
    return Ratio(value, low, high, FASTER if low > 1 else SLOWER if high < 1 else SAME)


def estimate(group: pd.DataFrame, use_steady: bool) -> Estimate:
    """One unit's :class:`Estimate` from its records (steady rates or the whole runs')."""
    mean, error, freedom = precision.mean_error(*precision.unit_rates(group, use_steady))
    return Estimate(mean, error, freedom, int(group["repeat"].nunique()))


def points(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Every unit of either run, in A's order then B's: both runs' mean rates, B/A with its interval and verdict,
    the rate compared, and what limited the point in each run, over their valid records; units one run lacks, or
    whose every repeat failed in a run, are not compared and ``why`` says so."""
    grouped_a, grouped_b = dict(list(a.groupby(UNIT, sort=False))), dict(list(b.groupby(UNIT, sort=False)))
    rows = []
    for key in dict.fromkeys([*grouped_a, *grouped_b]):
        row: dict[str, object] = dict(zip(UNIT, key))
        if key not in grouped_a or key not in grouped_b:
            side, present, verdict = ("a", grouped_a[key], ONLY_A) if key in grouped_a else ("b", grouped_b[key], ONLY_B)
            valid = succeeded(present)
            rows.append(row | {f"rate_{side}": float(valid["records_per_s"].mean()) if len(valid) else math.nan,
                               "verdict": verdict, "why": verdict, f"n_{side}": int(valid["repeat"].nunique()),
                               f"limit_{side}": _limit(valid)})
            continue
        mine, theirs = succeeded(grouped_a[key]), succeeded(grouped_b[key])
        if mine.empty or theirs.empty:
            failed = [f"failed in {side} ({_reason(group)})" for side, group, valid in
                      (("A", grouped_a[key], mine), ("B", grouped_b[key], theirs)) if valid.empty]
            broken = theirs.empty and not mine.empty
            rows.append(row | {"verdict": BROKEN if broken else UNTESTED, "why": " and ".join(failed), "n_a": int(mine["repeat"].nunique()),
                               "n_b": int(theirs["repeat"].nunique())})
            continue
        use_steady = steady.steady_rates(mine) and steady.steady_rates(theirs)
        ea, eb = estimate(mine, use_steady), estimate(theirs, use_steady)
        found = ratio(ea, eb)
        rows.append(row | {"rate": "steady" if use_steady else "whole run", "n_a": ea.repeats, "rate_a": ea.mean,
                           "n_b": eb.repeats, "rate_b": eb.mean, "ratio": found.ratio, "low": found.low,
                           "high": found.high, "verdict": found.verdict, "why": found.why, "limit_a": _limit(mine),
                           "limit_b": _limit(theirs)})
    columns = [*UNIT, "rate", "n_a", "rate_a", "n_b", "rate_b", "ratio", "low", "high", "verdict", "why", "limit_a",
               "limit_b"]
    return pd.DataFrame(rows).reindex(columns=columns)


def _reason(group: pd.DataFrame) -> str:
    """Why a unit's repeats failed, in their own words (the most common reason)."""
    return str(stats.most_common(group[FAILED])) if FAILED in group else "failed"


def _limit(group: pd.DataFrame) -> object:
    return stats.most_common(group["limit"]) if "limit" in group else None


def summary(table: pd.DataFrame) -> dict[str, str]:
    """Per experiment of a :func:`points` table, one line: how many points changed which way, and by how much, and
    why the others were not tested."""
    lines = {}
    for name, rows in table.groupby("experiment", sort=False):
        both = rows[~rows["verdict"].isin([ONLY_A, ONLY_B])]
        parts = [f"{len(both)} point(s) in both runs"]
        for verdict in (FASTER, SLOWER):
            changed = both[both["verdict"] == verdict]
            if len(changed):
                span = (f"x{changed['ratio'].iloc[0]:.2f}" if len(changed) == 1
                        else f"x{changed['ratio'].min():.2f} to x{changed['ratio'].max():.2f}")
                parts.append(f"{len(changed)} {verdict} in B ({span})")
        for verdict in (SAME, BROKEN, UNTESTED, ONLY_A, ONLY_B):
            count = int((rows["verdict"] == verdict).sum())
            if count:
                parts.append(f"{count} {verdict}" + (f" ({_reasons(rows[rows['verdict'] == verdict])})"
                                                     if verdict == UNTESTED else ""))
        lines[str(name)] = ", ".join(parts) + "."
    return lines


def untested(table: pd.DataFrame) -> dict[str, int]:
    """Why points were not tested (failed in a run, no interval, only in one run), each with how many."""
    left = table[~table["verdict"].isin(TESTED)]
    return {str(why): int(n) for why, n in left["why"].value_counts(sort=False).items()}


def _reasons(rows: pd.DataFrame) -> str:
    counts = untested(rows)
    return "; ".join(why if len(counts) == 1 else f"{n} {why}" for why, n in counts.items())


def worse(table: pd.DataFrame, threshold: float = 1.0) -> pd.DataFrame:
    """The points significantly slower in B by more than ``threshold`` (a factor of at least 1, as asv's
    ``--factor``: 1.1 is 10% slower; 1: any significant slowdown): verdict *slower* and B/A below 1 / threshold."""
    return table[(table["verdict"] == SLOWER) & (table["ratio"] < 1 / threshold)]


def exit_code(table: pd.DataFrame, threshold: float = 1.0) -> Exit:
    """What ``kperf compare`` exits with: WORSE when a point is :func:`worse` or failed in B where A measured it,
    UNDECIDED when no point could be tested, else OK."""
    if len(worse(table, threshold)) or (table["verdict"] == BROKEN).any():
        return Exit.WORSE
    return Exit.OK if table["verdict"].isin(TESTED).any() else Exit.UNDECIDED


def conditions(run_a: Path, a: pd.DataFrame, run_b: Path, b: pd.DataFrame) -> pd.DataFrame:
    """What differed between the runs besides chance: environment (environment.json, else the records' ``env.*``),
    the study's profile and overrides, and the parameters recorded at the points both measured."""
    env_a, env_b = environment(run_a, a), environment(run_b, b)
    rows = []
    for key, words in CONDITIONS.items():
        if key == "broker_config":
            rows += _broker_settings(env_a.get(key), env_b.get(key))
        elif str(env_a.get(key)) != str(env_b.get(key)):
            rows.append((words, env_a.get(key, "not recorded"), env_b.get(key, "not recorded")))
    read_a, read_b = (env.get("broker_metrics", "unavailable") != "unavailable" for env in (env_a, env_b))
    if read_a != read_b:
        rows.append(("brokers' metrics read", read_a, read_b))
    study_a, study_b = _study(run_a), _study(run_b)
    for key in ("profile", "overrides"):
        if study_a.get(key) != study_b.get(key):
            rows.append((key, json.dumps(study_a.get(key)), json.dumps(study_b.get(key))))
    rows += _parameters(a, b)
    return pd.DataFrame(rows, columns=["condition", "A", "B"]).map(_text)


def _text(value: object) -> str:
    """A condition's value as it reads; a missing one (None, NaN) as "not recorded", never "nan"."""
    return "not recorded" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def environment(run_dir: Path, results: pd.DataFrame) -> dict[str, object]:
    """The run's environment.json, else its last record's ``env.*`` columns (runs of ``kperf produce``)."""
    path = run_dir / "environment.json"
    if path.is_file():
        return dict(json.loads(path.read_text()))
    return {k.removeprefix("env."): v for k, v in results.filter(like="env.").iloc[-1].items()}


def _study(run_dir: Path) -> dict[str, object]:
    path = run_dir / runs.STUDY_FILE
    return dict(json.loads(path.read_text())) if path.is_file() else {}


def _broker_settings(a: object, b: object) -> list[tuple[str, object, object]]:
    """The broker settings that differ, one row each (listeners and quorum ports aside: they move every run)."""
    settings_a, settings_b = (json.loads(s) if isinstance(s, str) else {} for s in (a, b))
    moving = ("controller.quorum.voters", "listeners", "advertised.listeners")
    return [(f"broker setting {key}", settings_a.get(key, "default"), settings_b.get(key, "default"))
            for key in sorted(set(settings_a) | set(settings_b))
            if key not in moving and settings_a.get(key) != settings_b.get(key)]


def _parameters(a: pd.DataFrame, b: pd.DataFrame) -> list[tuple[str, object, object]]:
    """Parameters recorded differently at the points both runs measured, per experiment."""
    rows: list[tuple[str, object, object]] = []
    params = [c for c in a.columns.intersection(b.columns) if c.startswith("param.") and c != "param.precision"]
    first_a, first_b = (t.groupby(UNIT, sort=False)[params].first() for t in (a, b))
    common = first_a.index.intersection(first_b.index)
    for name in dict.fromkeys(common.get_level_values("experiment")):
        mine = first_a.loc[common][common.get_level_values("experiment") == name]
        theirs = first_b.loc[mine.index]
        for column in params:
            differ = mine[column].map(str) != theirs[column].map(str)
            if differ.any():
                was, now = (", ".join(dict.fromkeys(v[differ].map(str))) for v in (mine[column], theirs[column]))
                rows.append((f"{name}: {column.removeprefix('param.')} ({int(differ.sum())} point(s))", was, now))
    return rows


def load(run: str | Path) -> tuple[Path, pd.DataFrame]:
    """A run folder (or a run id under data/runs) and its records; an error naming it when it has none."""
    folder = runs.named(run)
    results = ResultStore.of_run(folder).load()
    if results.empty:
        raise KperfError(f"{folder} holds no results (expected Parquet files in {folder / 'results'})")
    return folder, results


@dataclass(frozen=True)
class Comparison:
    """Two runs' folders and records, their points compared (:func:`points`) and what differed (:func:`conditions`)."""

    folder_a: Path
    a: pd.DataFrame
    folder_b: Path
    b: pd.DataFrame
    table: pd.DataFrame
    differed: pd.DataFrame


def compared(run_a: str | Path, run_b: str | Path) -> Comparison:
    """Both runs compared, once each has records and they share a point; else an error naming what is wrong."""
    (folder_a, a), (folder_b, b) = load(run_a), load(run_b)
    if not set(a.groupby(UNIT).groups) & set(b.groupby(UNIT).groups):
        raise KperfError(f"{folder_a.name} and {folder_b.name} have no point in common (same experiment, point, "
                         "client and role): nothing to compare")
    return Comparison(folder_a, a, folder_b, b, points(a, b), conditions(folder_a, a, folder_b, b))


POINT_COLUMNS = {"point": "point", "param.client": "client", "role": "role", "rate": "rate compared",
                 "n_a": "A repeats", "rate_a": "A records/s", "n_b": "B repeats", "rate_b": "B records/s",
                 "ratio": "B/A", "low": "95% CI low", "high": "95% CI high", "verdict": "verdict",
                 "why": "not tested because", "limit_a": "A limited by", "limit_b": "B limited by"}
FORMATS = {"rate_a": "rate", "rate_b": "rate", "ratio": "ratio", "low": "ratio", "high": "ratio", "n_a": "plain",
           "n_b": "plain"}  # kperf.analysis.tables' formatter of each column


def items(run_a: str | Path | None, run_b: str | Path | None) -> list[object]:
    """The comparison as notebook items, in reading order: the runs, what differed, a line per experiment, then
    each experiment's points (changed ones marked). Run A defaults as a report's run does (``runs.chosen``),
    run B to run A (a run against itself: nothing changes)."""
    from IPython.display import Markdown

    from kperf.analysis import tables
    from kperf.study import experiment

    run_a = run_a or runs.chosen(None)
    c = compared(run_a, run_b or run_a)
    folder_a, a, folder_b, b, table, differed = c.folder_a, c.a, c.folder_b, c.b, c.table, c.differed
    lines = summary(table)
    shown: list[object] = [
        Markdown(f"A is run `{folder_a.name}` ({_described(folder_a, a)}); B is run `{folder_b.name}` "
                 f"({_described(folder_b, b)}). " + METHOD),
        Markdown("## What differed"),
        tables.Table(differed, {"condition": "condition", "A": "A", "B": "B"}, "Conditions that differ between the runs")
        if len(differed) else Markdown(NOTHING_DIFFERED),
        Markdown("## At a glance\n\n" + "\n".join(f"- **{experiment.get(n).title if n in experiment.names() else n}**: "
                                                  f"{line}" for n, line in lines.items())),
    ]
    formats = {column: getattr(tables, how) for column, how in FORMATS.items()}
    for name, rows in table.groupby("experiment", sort=False):
        title = experiment.get(str(name)).title if name in experiment.names() else str(name)
        shown += [Markdown(f"## {title}\n\n{lines[str(name)]}"), *figure(rows),
                  tables.Table(rows, POINT_COLUMNS, f"{title}: B against A, point by point", formats,
                               marked=rows["verdict"].isin([FASTER, SLOWER]), note="Marked: faster or slower in B.")]
    return shown


def figure(rows: pd.DataFrame) -> list[object]:
    """One experiment's points both runs measured, B/A with its interval on a log axis and a line at 1 (no change),
    coloured by verdict, with a one-line caption; nothing when no point has an interval."""
    import matplotlib.pyplot as plt
    from IPython.display import Markdown
    from matplotlib.ticker import FuncFormatter

    from kperf.analysis.plots import COLOURS, GUIDE

    both = rows.dropna(subset=["low", "high"]).iloc[::-1]
    if both.empty:
        return []
    colour = {FASTER: COLOURS[2], SLOWER: COLOURS[3], SAME: COLOURS[7]}
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.32 * len(both)))
    names = [f"{p} ({c}, {r})" for p, c, r in zip(both["point"], both["param.client"], both["role"])]
    for i, row in enumerate(both.itertuples()):
        ax.errorbar(row.ratio, i, xerr=[[row.ratio - row.low], [row.high - row.ratio]], fmt="o", capsize=3,
                    color=colour.get(str(row.verdict), "grey"))
    ax.axvline(1, **GUIDE)
    ax.set(xscale="log", yticks=range(len(both)), yticklabels=names, xlabel="B/A records/s (log scale), 95% interval")
    ax.tick_params(axis="y", labelsize="small")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"x{value:g}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda value, _: f"x{value:g}"))
    fig.tight_layout()
    return [fig, Markdown("*Figure: each point's B/A with its 95% interval; dotted: no change. Green: faster in B, "
                          "red: slower, grey: no significant change.*")]


METHOD = ("For each point both measured, B/A is the ratio of the mean rates over the repeats (steady rates when every "
          "repeat of both runs has one, else the whole runs'), with a 95% interval: Welch's on the logarithm of the "
          "means, each run's standard error as its precision computes it (over the repeats, or pooled over their "
          "batch means). *Faster* or *slower*: the interval excludes 1. Each verdict is at the 5% level, point by "
          "point: among twenty unchanged points, about one is called changed by chance.")


def _described(folder: Path, results: pd.DataFrame) -> str:
    """``quick profile, 232 measurements, Kafka 4.3.1``: what a run was, in a few words."""
    study = _study(folder)
    env = environment(folder, results)
    profile = f"{study['profile']} profile, " if study.get("profile") else ""
    return f"{profile}{len(results)} measurements, Kafka {env.get('kafka_version', 'unknown')}"


NOTHING_DIFFERED = "Nothing recorded differs: same Kafka, dependencies, broker settings, host, profile and parameters."
CHANGED_COLUMNS = {"point": "point", "param.client": "client", "role": "role", "rate_a": "A records/s",
                   "rate_b": "B records/s", "ratio": "B/A", "change": "change", "low": "95% CI low",
                   "high": "95% CI high", "verdict": "verdict", "beyond": "beyond threshold"}


def verdict_line(table: pd.DataFrame, threshold: float = 1.0) -> str:
    """The comparison's verdict in one line, as its exit code (:func:`exit_code`) says it."""
    code, slower = exit_code(table, threshold), worse(table, threshold)
    by = "" if threshold == 1 else f" by more than x{threshold:g} (B/A below x{1 / threshold:.2f})"
    if code == Exit.WORSE:
        broken = int((table["verdict"] == BROKEN).sum())
        return "worse: " + ", ".join([*([f"{len(slower)} point(s) significantly slower in B{by}"] if len(slower) else []),
                                      *([f"{broken} point(s) {BROKEN}"] if broken else [])])
    if code == Exit.UNDECIDED:
        return "undecided: no point could be tested"
    counts = table["verdict"].value_counts()
    return (f"no point significantly slower in B{by}: {counts.get(FASTER, 0)} faster, {counts.get(SLOWER, 0)} slower "
            f"within the threshold, {counts.get(SAME, 0)} no significant change")


def terminal(c: Comparison, threshold: float = 1.0) -> str:
    """The comparison for the terminal: the runs, what differed, each experiment's line and its points that changed
    (B/A, the change and its 95% interval), why points were not tested, and the verdict."""
    from kperf.analysis import tables

    lines = [f"A is run {c.folder_a.name} ({_described(c.folder_a, c.a)}); "
             f"B is run {c.folder_b.name} ({_described(c.folder_b, c.b)}).", "", "What differed:"]
    lines += _indented(c.differed.to_string(index=False)) if len(c.differed) else [f"  {NOTHING_DIFFERED}"]
    formats = {column: getattr(tables, how) for column, how in FORMATS.items()}
    slower = worse(c.table, threshold).index
    for name, line in summary(c.table).items():
        lines += ["", f"{name}: {line}"]
        rows = c.table[(c.table["experiment"] == name) & c.table["verdict"].isin([FASTER, SLOWER])]
        if len(rows):
            shown = rows.assign(change=[f"{r - 1:+.1%}" for r in rows["ratio"]],
                                beyond=["WORSE" if i in slower else "" for i in rows.index])
            lines += _indented(tables.Table(shown, CHANGED_COLUMNS, formats=formats).text().to_string(index=False))
    left = untested(c.table)
    if left:
        lines += ["", f"Not tested: {sum(left.values())} point(s): " + "; ".join(f"{n} {why}" for why, n in left.items())]
    return "\n".join([*lines, "", f"Verdict: {verdict_line(c.table, threshold)}."])


def _indented(text: str) -> list[str]:
    return [f"  {line}" for line in text.splitlines()]


def as_json(c: Comparison, threshold: float = 1.0) -> dict[str, object]:
    """The comparison, machine-readable (``kperf compare --json``): missing numbers are null, never NaN."""
    def records(frame: pd.DataFrame) -> list[dict[str, object]]:
        return list(json.loads(frame.to_json(orient="records")))

    code = exit_code(c.table, threshold)
    return {"run_a": str(c.folder_a), "run_b": str(c.folder_b), "threshold": threshold, "exit": int(code),
            "verdict": verdict_line(c.table, threshold), "differed": records(c.differed), "summary": summary(c.table),
            "tested": int(c.table["verdict"].isin(TESTED).sum()), "not_tested": untested(c.table),
            "worse": records(worse(c.table, threshold)[UNIT]), "points": records(c.table)}
