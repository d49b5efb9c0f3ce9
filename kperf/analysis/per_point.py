"""Each experiment's tables of its points, shared by its own notebook and the report: per point, client and role,
what was measured (the median rate with its interval, the steady rate, the precision reached, what limited it) and
the brokers' own view. They return data; :mod:`kperf.analysis.tables` shows them to people and
:mod:`kperf.analysis.plots` draws the figures.
"""

from __future__ import annotations

import pandas as pd

from kperf import steady
from kperf.analysis import stats

UNIT = steady.UNIT[1:]  # a table is of one experiment: its units by point, client and role


def table(name: str, results: pd.DataFrame) -> pd.DataFrame:
    """Per point, client and role: median records/s with spread, the median's interval and the unstable flag;
    with records of schema 3 on, the median steady-state rate, the precision reached (``kperf.steady.precision``)
    and whether it met the target (``precise``), and what limited the point most often."""
    if results.empty:
        return pd.DataFrame()
    order = {point: i for i, point in enumerate(dict.fromkeys(results["point"]))}  # the plan's order
    summary = stats.summarize(results, UNIT)
    if "limit" in results:  # schema 3 on; units too short for a steady state (or the stock tools before Kafka 4.2) have none
        results = results.assign(**{c: float("nan") for c in ("steady_records_per_s", "steady_low", "steady_high")
                                    if c not in results})
        grouped = results.groupby(UNIT)
        summary = summary.merge(grouped["steady_records_per_s"].median().rename("steady_median").reset_index(), on=UNIT)
        summary = summary.merge(precise(results).drop(columns="experiment"), on=UNIT)
        summary = summary.merge(grouped["limit"].agg(stats.most_common).reset_index(), on=UNIT)
    return summary.sort_values("point", key=lambda col: col.map(order), kind="stable", ignore_index=True)


BROKER_PHASES = {"request_queue": "request queue", "local": "local", "remote": "remote (replication)",
                 "response_queue": "response queue", "response_send": "response send", "total": "total"}
BROKER_REQUEST = {"producer": "produce", "consumer": "fetch_consumer", "end-to-end": "produce"}


def broker_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per point, client and role, the brokers' own view (medians over the repeats): where a request's time went
    (ms per produce request for producers, per consumer fetch for consumers) and the brokers' idle ratios; empty
    when no record has it (no metrics were readable: the view is unavailable, never guessed)."""
    if "broker.produce_total_ms" not in results or results["broker.produce_total_ms"].isna().all():
        return pd.DataFrame()
    rows = []
    for key, group in results.groupby(UNIT, sort=False):
        request = BROKER_REQUEST.get(group["role"].iloc[0], "produce")
        rows.append({**dict(zip(UNIT, key)), "request": request,
                     **{f"{words} ms": group[f"broker.{request}_{phase}_ms"].median() for phase, words in BROKER_PHASES.items()},
                     "handler idle %": group["broker.handler_idle_pct"].median(),
                     "network idle %": group["broker.network_idle_pct"].median(),
                     "bytes in MiB/s": group["broker.bytes_in_mib_per_s"].median()})
    return pd.DataFrame(rows)


def precise(results: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, point, client and role: the precision reached (``kperf.steady.precision``) and whether it
    met the unit's own target (``precise``)."""
    reached = steady.precisions(results)
    target = results.groupby(steady.UNIT)["param.precision"].max().rename("target").reset_index()
    merged = reached.merge(target, on=steady.UNIT)
    return merged.assign(precise=merged["precision"] <= merged["target"])[[*steady.UNIT, "precision", "precise"]]
