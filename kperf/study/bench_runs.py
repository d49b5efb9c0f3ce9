"""One side of a ``kperf bench`` comparison (a real ``kperf`` run, or a ceiling tool's), how the two sides' runs
are paired (in turns, or at once), and the table row that compares them: what every comparison shares."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kperf.drivers import rdkafka_performance
from kperf.errors import KperfError, MeasurementFailed
from kperf.exits import Exit
from kperf.results import CLIENT_CPU


def kperf_json(*args: str, allow_failed: bool = False) -> dict[str, Any]:
    """One ``kperf ... --json`` run in its own process (so its memory is its own); ``allow_failed``: its record even
    when its measurement failed (for a figure that needs no rate)."""
    argv = [sys.executable, "-m", "kperf.cli", *args, "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode == Exit.FAILED and allow_failed:
        return json.loads(result.stdout)
    if result.returncode == Exit.FAILED:  # its measurement failed: so does bench's (exit FAILED, not ERROR)
        raise MeasurementFailed(f"bench run 'kperf {' '.join(args)}' failed: {result.stderr.strip()[-300:]}",
                                "bench run failed")
    if result.returncode != 0:
        raise KperfError(f"bench run 'kperf {' '.join(args)}' failed: {result.stderr.strip()[-300:]}")
    return json.loads(result.stdout)


Figures = dict[str, float]  # what one run measured, by key (a record's columns)
Run = Callable[[], Figures]  # one measurement of one side of a comparison
PER_MILLION = "client_cpu_s_per_million"  # the client's CPU seconds per million records: what a load host pays


def per_million(figures: Figures) -> Figures:
    """``figures`` with the client's CPU seconds per million records, where it has CPU and records."""
    cpu, records = figures.get(CLIENT_CPU), figures.get("records")
    return figures | ({PER_MILLION: cpu / records * 1e6} if cpu is not None and records else {})


def cli(*args: str, allow_failed: bool = False) -> Run:
    """A run of ``kperf ARGS --json``, giving its record's figures."""
    return lambda: per_million(kperf_json(*args, allow_failed=allow_failed))


def ceiling_run(role: str, bootstrap: str, records: int, size: int, topic: str) -> Run:
    """A run of rdkafka_performance as ``role``: its records/s (for a consumer, from the first record to the last,
    as kperf's ``fetch_records_per_s``) and CPU seconds."""
    def run() -> Figures:
        measured = rdkafka_performance.run(role, bootstrap, topic, records, size)
        return per_million({"records": measured.records, "records_per_s": measured.records_per_s,
                            "fetch_records_per_s": measured.records_per_s, **measured.measures})
    return run


def settled(run: Run) -> Run:
    """``run``, once this host's dirty pages are written (``os.sync``, outside the run's own clock): records of 1 KB
    come faster than this disk writes, so the page cache's dirty limit throttles the local
    brokers, and no run should pay for the last one's pages. (The slow runs that :func:`at_once` works around
    remained with it.) Of a remote cluster's brokers it knows nothing: there it costs a moment."""
    def run_settled() -> Figures:
        os.sync()
        return run()
    return run_settled


def paired(repeats: int, ours: Run, theirs: Run, warm_up: bool = True) -> tuple[list[Figures], list[Figures]]:
    """``repeats`` runs of each side, interleaved, the side that goes first alternating, so drift hits both alike;
    after one unrecorded run (``warm_up``): a fresh topic's first run was the slowest here (a producer's 777,741
    records/s, then 967,795 and 1,073,230 in the same comparison), and it fell on the first side every time."""
    if warm_up:
        ours()
    runs: tuple[list[Figures], list[Figures]] = ([], [])
    for repeat in range(repeats):
        sides = tuple(zip(runs, (ours, theirs)))
        for side, measure in sides if repeat % 2 == 0 else reversed(sides):
            side.append(measure())
    return runs


def at_once(repeats: int, ours: Run, theirs: Run, before: Callable[[], None]) -> tuple[list[Figures], list[Figures]]:
    """``repeats`` runs of both sides at the same time (``before`` each), on the same brokers, so whatever slows the
    brokers meanwhile slows both alike. For an instrument's cost on a record size the brokers bound: producing 1 KB
    records here, one run in three or four was 15 to 25% slower than the rest (the brokers' produce time 3 to 5 ms
    against 1.7), and in turns three repeats could not resolve 5%. Both sides are to send for the same time (a
    duration, not a count: with counts the first to finish left the other its last records alone, pulling a rate ratio
    toward 1). No warm-up: a fresh topic's slow first run is both sides'."""
    runs: tuple[list[Figures], list[Figures]] = ([], [])
    with ThreadPoolExecutor(2) as pool:
        for _ in range(repeats):
            before()
            first, second = pool.submit(ours), pool.submit(theirs)
            runs[0].append(first.result())
            runs[1].append(second.result())
    return runs


def row(comparison: str, setting: str, measure: str, runs: tuple[list[Figures], list[Figures]], key: str,
        their_key: str | None = None, pairs: bool = False) -> dict[str, Any]:
    """The comparison of ``key`` (``their_key`` on the second side): the medians of each side's runs, ratio = first /
    second, or with ``pairs`` (runs made at once, :func:`at_once`, or back to back, :func:`paired`) the median of each
    pair's own ratio, so what changed between pairs (the brokers' pace: 170,000 to 230,000 records/s a side in one
    comparison) cancels; a
    failed measurement when a run lacks the figure (a fetch rate is given only from a span a rate may come from)."""
    def median(side: list[Figures], name: str) -> float:
        if any(figures.get(name) is None for figures in side):
            raise MeasurementFailed(f"bench: a run for '{comparison}' gave no {name} (too short for a rate: more --records)",
                                    "bench run gave no rate")
        return statistics.median(float(figures[name]) for figures in side)

    ours, theirs = median(runs[0], key), median(runs[1], their_key or key)
    if pairs:
        ratio = statistics.median(a[key] / b[their_key or key] if b[their_key or key] else float("nan")
                                  for a, b in zip(*runs, strict=True))
    else:
        ratio = ours / theirs if theirs else float("nan")
    return {
        "comparison": comparison,
        "setting": setting,
        "measure": measure,
        "first": ours,
        "second": theirs,
        "ratio": ratio,
    }
