"""The report's own text and items (summary, sections, comparisons, environment, caveats), shown by the report
notebook; :func:`kperf.study.notebooks.render_report` executes it and writes the HTML file and its Markdown twin."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from kperf import limits
from kperf.analysis import per_point, plots, published, stats, tables
from kperf.analysis.findings import clients_compared, ranked, top_two
from kperf.results import FAILED, UNIT, ResultStore, failures, succeeded
from kperf.study import experiment, runs
from kperf.study.finding import Finding


def summary(results: pd.DataFrame) -> str:
    """The report's opening, in Markdown: what was run, where, and how to read the intervals."""
    experiments = results["experiment"].nunique()
    env = results.iloc[-1]
    lock = env.get("env.lock_sha256")  # a record from before the lock was recorded has none (NaN among others)
    failed = len(results) - len(succeeded(results))
    return "\n".join([
        f"Run `{env['run_id']}`: {len(results)} measurements of {experiments} experiment(s)"
        + (f" ({failed} failed: left out of every answer, listed with their reasons under *Failed units*)" if failed else "")
        + " against "
        f"{env['env.cluster']} Kafka {env['env.kafka_version']} ({env['env.brokers']} broker(s)), "
        f"kperf's dependencies locked as `{lock[:12] if isinstance(lock, str) and lock else 'unrecorded'}`. "
        "Intervals are of the median of the repeats, with the coverage their number allows "
        "(two repeats: their range, 50%); model parameters carry 95% confidence intervals.",
        "",
        carried(results),
    ])


HOST_LIMITS = (limits.LOAD_GENERATOR, limits.HOST_CPU)  # limits that measured this host, not Kafka


def answers(results: pd.DataFrame) -> tables.Table:
    """The answer table, one row per experiment (:func:`answer`), rows whose answer measured this host marked.
    A capacity verdict, where a run has one, belongs in the first rows."""
    found = [row for exp in experiment.registered() if (row := answer(exp, results[results["experiment"] == exp.name]))]
    headings = {"experiment": "experiment", "question": "question", "answer": "answer (median of the repeats)",
                "interval": "its interval", "ahead": "ahead of the runner-up? (Welch, 5%)", "limit": "limited by"}
    return tables.Table(
        pd.DataFrame(found, columns=list(headings)), headings, "The answers",
        marked=pd.Series([row["limit"] in HOST_LIMITS for row in found], dtype=bool),
        note="Marked: the answer measured this host (a client process or the host's CPU was full), not Kafka.")


def answer(exp: experiment.Experiment, rows: pd.DataFrame) -> dict[str, str] | None:
    """One experiment's row: its question, its best point by its own measure (``Experiment.measure``, among the
    rows of ``Experiment.answer_where``, on the first role and the Python client where measured; rate-capped points
    aside when the measure is a rate), that point's median with its interval, whether it is ahead of the runner-up
    (Welch's t-test), and what limited it, from its valid records (:func:`kperf.results.succeeded`); when none is
    valid, a row saying so; None when the experiment's records lack its measure."""
    column, end = exp.measure
    valid = succeeded(rows)
    if valid.empty and not rows.empty:
        return {"experiment": exp.title, "question": exp.question,
                "answer": f"no answer: all {len(rows)} of its measurements failed (see Failed units)",
                "interval": "", "ahead": "", "limit": ""}
    if column not in valid or valid[column].isna().all():
        return None
    rows = valid.dropna(subset=[column])
    for where, value in exp.answer_where:
        rows = rows[rows[where] == value] if where in rows else rows.iloc[0:0]
    if rows.empty:
        return None
    role = next(r for r in ("producer", "consumer", "end-to-end", *rows["role"]) if (rows["role"] == r).any())
    client = "python" if (rows["param.client"] == "python").any() else rows["param.client"].iloc[0]
    mine = rows[(rows["role"] == role) & (rows["param.client"] == client)]
    limit = mine.groupby("point")["limit"].agg(stats.most_common) if "limit" in mine else pd.Series(dtype=object)
    if column == "records_per_s" and (limit != limits.RATE_CAP).any():
        mine = mine[~mine["point"].map(limit).eq(limits.RATE_CAP)]
    order = ranked(mine, "point", column, end == "highest")
    best, versus = order.iloc[0], top_two(mine, "point", column, order)
    value, what = tables.rate(best["median"]), plots.label(column)
    if column == "records_per_s":
        said = f"{value} records/s"
    elif best["median"] == 0:  # a count at its best: how often it was none, not a median of zeros
        zeros = int((mine.loc[mine["point"] == best["point"], column] == 0).sum())
        said = f"{what} 0 in {zeros} of {int(best['n'])} repeat(s)"
    else:
        said = f"{what} {value}"
    return {
        "experiment": exp.title, "question": exp.question,
        "answer": f"{best['point']}: {said} ({client} {role})",
        "interval": (f"{tables.rate(best['median_low'])} to {tables.rate(best['median_high'])} "
                     f"({best['coverage']:.0%} CI, n={int(best['n'])})" if best["n"] > 1 else "one measurement"),
        "ahead": "only point" if versus is None else ahead(versus, order.iloc[1], what),
        "limit": str(limit.get(best["point"]) or "not recorded"),
    }


def ahead(versus: stats.Comparison, second: pd.Series, what: str) -> str:
    """Whether the best point is ahead of the runner-up, in words: their ratio where it is a number (the runner-up's
    own value where its median is 0: no ratio of zeros), and the test's p-value or why there is none."""
    shown = (f"x{versus.ratio:.2f} over {versus.other}" if np.isfinite(versus.ratio) and versus.ratio > 0 else
             f"{versus.other} {what} {tables.rate(second['median'])} here")
    why = (f"p={versus.p_value:.2g}" if np.isfinite(versus.p_value) else
           "too few repeats" if second["n"] < 2 else "no spread between repeats to test")
    return f"{'yes' if versus.significant else 'no'}: {shown} ({why})"


def section(
    name: str, results: pd.DataFrame, finding: Finding, points: bool = True, store: ResultStore | None = None
) -> list[object]:
    """One experiment's part of a notebook: title, figure with fitted curves, what the data say, the fitted
    parameters or ranking, (``points``) the table of points, and (``store``) the time series of its units with
    the highest and the lowest steady rate; failed units left out."""
    rows = succeeded(results[results["experiment"] == name])
    title = experiment.get(name).title
    items: list[object] = [
        Markdown(f"### {title}"),
        Markdown("\n".join(f"- {sentence}" for sentence in finding.answers)),
    ]
    if rows.empty:
        return items  # every unit failed: nothing to draw or table (its answer says so)
    items += [
        plots.figure(name, rows, finding.curves),
        Markdown(plots.caption(name, rows)),
    ]
    if finding.details:
        items.append(Markdown("<details><summary>Why these models</summary>\n\n"
                              + "\n".join(f"- {sentence}" for sentence in finding.details) + "\n\n</details>"))
    if not finding.table.empty:
        items.append(tables.of(finding.table, f"{title}: fitted parameters or ranking", "(median)"))
    if points:
        items.append(point_table(title, per_point.table(name, rows)))
    view = per_point.broker_table(rows)
    if not view.empty:
        items += [Markdown("The brokers' own view (their metrics over each unit; medians of the repeats): where a "
                           "request's time went, and how idle their threads were:"), tables.of(view, f"{title}: the brokers' view")]
    series = plots.series_figure(rows, store) if store is not None else None
    if series is not None:
        items += [Markdown("Window by window, the units with the highest and the lowest steady rate:"), series]
    return items


def beside_published(name: str, results: pd.DataFrame) -> list[object]:
    """The published studies' numbers for one experiment beside ours (their conditions and known mistakes stated),
    their figure and ours as shares of each peak, and whether the shapes agree (failed units left out)."""
    rows = succeeded(results[results["experiment"] == name])
    sentences = published.comparisons(name, rows)
    if not sentences:
        return []
    figure = published.figure(name, rows)
    captioned = [figure, Markdown("*Figure: each study's records/s and this run's, as a share of its own peak: compare "
                                  "the shapes (where each peaks or levels off), not the heights.*")] if figure else []
    numbers = [tables.of(table, title, note=note) for title, table, note in published.side_by_side(name, rows)]
    return [Markdown(f"### {experiment.get(name).title}"), *numbers, *captioned,
            Markdown("\n".join(f"- {sentence}" for sentence in sentences))]


def show(items: list[object]) -> None:
    """Display notebook items in order: tables for people (:mod:`kperf.analysis.tables`), figures closed once
    shown (a study makes dozens)."""
    for item in items:
        if isinstance(item, pd.DataFrame) and item.empty:
            continue  # nothing to read (the sentence beside it says why)
        display(tables.of(item) if isinstance(item, pd.DataFrame) else item)
        if isinstance(item, plt.Figure):
            plt.close(item)


def point_table(title: str, table: pd.DataFrame) -> tables.Table:
    """Every point of an experiment (:func:`kperf.analysis.per_point.table`), marked where it is unstable, short of its
    precision target or limited by this host rather than Kafka."""
    marked = table["unstable"].astype(bool)
    if "precise" in table:
        marked |= ~table["precise"].astype(bool)
    if "limit" in table:
        marked |= table["limit"].isin(HOST_LIMITS)
    return tables.of(table, f"{title}: every point", "records/s", marked,
                     "Marked: unstable (repeats varied by more than 10%), short of the precision target, or limited by "
                     "this host (a client process or the host's CPU) rather than Kafka.")


def carried(results: pd.DataFrame) -> str:
    """The short answer to "what can this cluster carry": the best median per role, where it was measured."""
    parts, valid = [], succeeded(results)
    for role, verb in (("producer", "written"), ("consumer", "read")):
        rows = valid[valid["role"] == role]
        if rows.empty:
            continue
        medians = rows.groupby(["experiment", "point", "param.client"])[["records_per_s", "mib_per_s"]].median()
        top = medians["records_per_s"].idxmax()
        (where, point, client), best = top, medians.loc[top]
        parts.append(f"{best['records_per_s']:,.0f} records/s ({best['mib_per_s']:,.1f} MiB/s) {verb} by the {client} "
                     f"client, in the {where} experiment at {point}")
    return ("**What this cluster carried**, at best (median of the repeats): " + "; ".join(parts) + "."
            if parts else "")


def clients_text(results: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """Python client against the stock Java tools, where the study ran both: a sentence and the table."""
    table = clients_compared(results)
    if table.empty:
        return "No point was measured with both clients (the profile's `clients` chose one).", table
    ratio = table["java_over_python"]
    return (
        f"At {len(table)} point(s) measured with both, the stock Java tool's median records/s was "
        f"{ratio.min():.2f}-{ratio.max():.2f}x the Python client's (median {ratio.median():.2f}x). "
        "They run the same load through different clients: librdkafka in a Python process, "
        "and the Java client in a JVM that warms up during short points.",
        table,
    )


def environment(results: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """Where and with what the numbers were measured: the last record's ``env.*`` and the study's request."""
    env = results.filter(like="env.").iloc[-1].rename(lambda c: c.removeprefix("env."))
    study_file = run_dir / runs.STUDY_FILE
    if study_file.is_file():
        study = json.loads(study_file.read_text())
        env["profile"] = study.get("profile")
        env["overrides"] = json.dumps(study.get("overrides") or {})
    return env.rename("value").rename_axis("setting").reset_index()


FAILED_HEADINGS = {"experiment": "experiment", "point": "point", "param.client": "client", "role": "role",
                   "repeat": "repeat", FAILED: "why it failed"}


def failed_units_section(results: pd.DataFrame) -> list[object]:
    """The failed units (records whose measurement is not valid, :mod:`kperf.validity`), each with its reason in
    words, under their own heading; nothing when none failed (or for records older than the ``failed`` column)."""
    failed = failures(results)
    if failed.empty:
        return []
    table = failed.reindex(columns=list(FAILED_HEADINGS)).sort_values(["experiment", "point", "repeat"], kind="stable")
    return [Markdown(f"### Failed units\n\n{len(failed)} of {len(results)} measurements failed: they are left out of every "
                     "fit, answer, advice and comparison above, and their rates are not numbers."),
            tables.Table(table.reset_index(drop=True), FAILED_HEADINGS, "Failed units")]


def limited(results: pd.DataFrame) -> list[str]:
    """Points grouped by what limited them, in words; nothing for records older than the limit column."""
    if "limit" not in results:
        return []
    units = succeeded(results).groupby(UNIT)["limit"].agg(stats.most_common).dropna()
    notes = []
    for name, words in limits.WORDS.items():
        hit = units[units == name]
        if len(hit):
            where = ", ".join(dict.fromkeys(hit.index.get_level_values("experiment")))
            notes.append(f"{len(hit)} of {len(units)} points {words} ({where}; column `limit`, "
                         "with its evidence in `limit_evidence`).")
    return notes


def precision_notes(results: pd.DataFrame) -> list[str]:
    """How many points met the precision target, in words; nothing for records before the target was recorded."""
    if "param.precision" not in results:
        return []
    reached = per_point.precise(results)
    targets = ", ".join(f"{t:.0%}" for t in sorted(results["param.precision"].dropna().unique()))
    sentence = (f"{int(reached['precise'].sum())} of {len(reached)} points met the precision target ({targets}): the "
                "half-width of their rate's 95% interval (over the repeats, or a single run's windows) within that "
                "share of the rate; the tables flag the others (`precise`) with the precision they reached, after the "
                "extra repeats the profile allowed.")
    if "limit" in results:
        limit = results.groupby(UNIT)["limit"].agg(stats.most_common).rename("limit").reset_index()
        missed = reached[~reached["precise"]].merge(limit, on=UNIT)["limit"].fillna("not recorded")
        if len(missed):
            counts = missed.value_counts()
            sentence += " What limited those that missed it: " + ", ".join(f"{n} {name}" for name, n in counts.items()) + "."
    return [sentence]


def load_hosts(results: pd.DataFrame) -> list[str]:
    """Where the load came from when Dask workers generated it (``--workers``), and whether a load host was full."""
    if "env.load_detail" not in results or results["env.load_detail"].isna().all():
        return []
    remote = results[results["env.load_detail"].notna()]
    hosts = sorted({h for listed in remote["env.load_hosts"] for h in str(listed).split(",")})
    notes = [f"The load came from Dask workers on {len(hosts)} host(s) ({', '.join(hosts)}), up to "
             f"{int(remote['env.load_processes'].max())} load processes a point. End-to-end latency measured across "
             f"hosts is off by their clocks' offset from this host (up to {remote['env.clock_offset_ms'].max():.1f} ms, "
             "column `env.clock_offset_ms`, per host in `env.load_detail`)."]
    full = remote[remote["res.load_host_busy_pct"] >= limits.BUSY * 100] if "res.load_host_busy_pct" in remote else remote[:0]
    if len(full):
        busiest = Counter(host for detail in full["env.load_detail"] for host, d in json.loads(detail).items()
                          if d["host_cpu_pct"] >= limits.BUSY * 100 * d["cores"])
        which = ", ".join(f"{host} in {n}" for host, n in busiest.most_common())
        notes.append(f"Warning: in {len(full)} of {len(remote)} records a load host's cores were {limits.BUSY:.0%} busy "
                     f"or more (`res.load_host_busy_pct`; {which}): those measure the load hosts, not Kafka; add load hosts.")
    return notes


def caveats(results: pd.DataFrame) -> list[str]:
    """What limits these numbers, read from the records themselves (the valid ones)."""
    env = results.iloc[-1]
    results = succeeded(results)
    if results.empty:
        return []  # nothing measured: the failed units say why
    notes = precision_notes(results) + limited(results)
    if env["env.cluster"] == "local":
        notes.append(
            f"Brokers and clients shared one host of {env['env.cpu_count']} CPU cores ({env['env.brokers']} brokers "
            "plus every client process): scaling with partitions, producers and consumers is bounded by that CPU, "
            "not by Kafka, and other work on the host adds noise."
        )
    points = stats.summarize(results, UNIT)  # as the tables flag them
    notes.append(
        f"{int(points['unstable'].sum())} of {len(points)} points varied by more than {stats.UNSTABLE_CV:.0%} between "
        f"repeats (flagged `unstable` in the tables); repeats per point: {points['n'].min()}-{points['n'].max()}."
    )
    if env.get("env.broker_metrics", "unavailable") == "unavailable":
        notes.append("The brokers' own metrics were not read (not kperf's own cluster, and no --broker-metrics URL), "
                     "so the broker view (where a request's time goes, the brokers' thread idle ratios) is unavailable.")
    protocol = env.get("env.security_protocol", "PLAINTEXT")
    if isinstance(protocol, str) and protocol != "PLAINTEXT":
        notes.append(
            f"Clients connected over {protocol} (SASL mechanism: {env['env.sasl_mechanism']}): encryption and "
            "authentication cost CPU on both sides, so these numbers compare with other runs over the same protocol."
        )
    notes += load_hosts(results)
    if (results["param.client"] == "java").any():
        notes.append("The stock Java tools' latency includes the JVM's warm-up, which dominates short points.")
    if "res.topic_disk_bytes" not in results or results["res.topic_disk_bytes"].isna().all():
        notes.append("Bytes on disk (and so compression ratios) are known only when kperf started the cluster.")
    return notes
