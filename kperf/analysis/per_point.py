"""Each experiment's tables of its points, shared by its own notebook and the report: per point, client and role,
what was measured (the median rate with its interval, the steady rate, the precision reached, what limited it) and
the brokers' own view. They return data; :mod:`kperf.analysis.tables` shows them to people and
:mod:`kperf.analysis.plots` draws the figures.
"""

from __future__ import annotations

import pandas as pd

from kperf import broker_columns, precision
from kperf.analysis import stats
from kperf.results import UNIT, succeeded

POINT_UNIT = UNIT[1:]  # a table is of one experiment: its units by point, client and role


def table(name: str, results: pd.DataFrame) -> pd.DataFrame:
    """Per point, client and role: median records/s with spread, the median's interval and the unstable flag;
    with records of schema 3 on, the median steady-state rate, the precision reached (``kperf.precision.precision``)
    and whether it met the target (``precise``), and what limited the point most often; failed units left out."""
    results = succeeded(results)
    if results.empty:
        return pd.DataFrame()
    order = {point: i for i, point in enumerate(dict.fromkeys(results["point"]))}  # the plan's order
    summary = stats.summarize(results, POINT_UNIT)
    if "limit" in results:  # schema 3 on; units too short for a steady state (or the stock tools before Kafka 4.2) have none
        results = results.assign(**{c: float("nan") for c in ("steady_records_per_s", "steady_low", "steady_high")
                                    if c not in results})
        grouped = results.groupby(POINT_UNIT)
        summary = summary.merge(grouped["steady_records_per_s"].median().rename("steady_median").reset_index(), on=POINT_UNIT)
        summary = summary.merge(precise(results).drop(columns="experiment"), on=POINT_UNIT)
        summary = summary.merge(grouped["limit"].agg(stats.most_common).reset_index(), on=POINT_UNIT)
    return summary.sort_values("point", key=lambda col: col.map(order), kind="stable", ignore_index=True)


# A request's phases in the order it passes them, then its total: the table's columns.
BROKER_PHASES = [*(phase for phase in broker_columns.PHASES if phase != broker_columns.TOTAL), broker_columns.TOTAL]
BROKER_REQUEST = {"producer": broker_columns.PRODUCE, "consumer": broker_columns.FETCH_CONSUMER,
                  "end-to-end": broker_columns.PRODUCE}


def broker_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per point, client and role, the brokers' own view (medians over the repeats): where a request's time went
    (ms per produce request for producers, per consumer fetch for consumers) and the brokers' idle ratios; empty
    when no record has it (no metrics were readable: the view is unavailable, never guessed); failed units left out."""
    results = succeeded(results)
    produce_total = broker_columns.time_ms(broker_columns.PRODUCE, broker_columns.TOTAL)
    if produce_total not in results or results[produce_total].isna().all():
        return pd.DataFrame()
    rows = []
    for key, group in results.groupby(POINT_UNIT, sort=False):
        request = BROKER_REQUEST.get(group["role"].iloc[0], broker_columns.PRODUCE)
        rows.append({**dict(zip(POINT_UNIT, key)), "request": request,
                     **{f"{broker_columns.PHASES[phase]} ms": group[broker_columns.time_ms(request, phase)].median()
                        for phase in BROKER_PHASES},
                     "handler idle %": group[broker_columns.HANDLER_IDLE_PCT].median(),
                     "network idle %": group[broker_columns.NETWORK_IDLE_PCT].median(),
                     "bytes in MiB/s": group[broker_columns.BYTES_IN_MIB_PER_S].median()})
    return pd.DataFrame(rows)


def precise(results: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, point, client and role: the precision reached (``kperf.precision.precision``) and whether it
    met the unit's own target (``precise``)."""
    reached = precision.precisions(results)
    target = results.groupby(UNIT)["param.precision"].max().rename("target").reset_index()
    merged = reached.merge(target, on=UNIT)
    return merged.assign(precise=merged["precision"] <= merged["target"])[[*UNIT, "precision", "precise"]]
