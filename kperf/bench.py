"""``kperf bench``: are kperf's own instruments good enough to trust?

Measured in one run, side by side, on the same topics and record sizes:
the Python producer (P processes) against Kafka's ProducerPerformance, the
Python consumer against ConsumerPerformance, the producer with and without
latency recording, and the producer's peak memory at a small and a large
record count. Every measurement is a real ``kperf produce|consume`` run (so
each also lands in ``data/adhoc``); the figures are ratios taken in one run,
never absolute speeds, because the machine is shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from kperf import topics
from kperf.errors import KperfError
from kperf.paths import data_dir
from kperf.target import Target

RECORD_SIZES = (100, 1024)
PARTITIONS = 6


def kperf_json(*args: str) -> dict[str, Any]:
    """One ``kperf ... --json`` run in its own process (so its memory is its own)."""
    argv = [sys.executable, "-m", "kperf.cli", *args, "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise KperfError(f"bench run 'kperf {' '.join(args)}' failed: {result.stderr.strip()[-300:]}")
    return json.loads(result.stdout)


def row(what: str, setting: str, measure: str, kperf_value: float, other: float, other_label: str) -> dict[str, Any]:
    return {
        "comparison": what,
        "setting": setting,
        "measure": measure,
        "kperf": kperf_value,
        other_label: other,
        "ratio": kperf_value / other if other else float("nan"),
    }


def run(target: Target, records: int, rss_records: tuple[int, int], producers: int) -> pd.DataFrame:
    """Every comparison of the module docstring, as a table (``ratio`` = kperf / the other)."""
    rows = []
    for size in RECORD_SIZES:
        with topics.temporary(target.bootstrap, "bench", PARTITIONS, 1) as topic:
            common = ["--bootstrap", target.bootstrap, "--topic", topic]
            amount = ["--records", str(records), "--record-size", str(size)]
            python = kperf_json("produce", *common, *amount, "--producers", str(producers))
            java = kperf_json("produce", *common, *amount, "--client", "java")
            rows.append(row("producer: python vs java", f"{size} B, {producers} proc.", "records/s",
                            python["records_per_s"], java["records_per_s"], "other"))
            python_c = kperf_json("consume", *common, "--records", str(records))
            java_c = kperf_json("consume", *common, "--records", str(records), "--client", "java")
            rows.append(row("consumer: python vs java", f"{size} B", "records/s",
                            python_c["records_per_s"], java_c["records_per_s"], "other"))
            with_latency = kperf_json("produce", *common, *amount)
            without = kperf_json("produce", *common, *amount, "--no-latency")
            rows.append(row("producer: latency recording on vs off", f"{size} B", "records/s",
                            with_latency["records_per_s"], without["records_per_s"], "other"))
    with topics.temporary(target.bootstrap, "bench", PARTITIONS, 1) as topic:
        small, large = (
            kperf_json("produce", "--bootstrap", target.bootstrap, "--topic", topic, "--records", str(n), "--record-size", "100")
            for n in rss_records
        )
        rows.append(row("producer peak RSS: large vs small run", f"{rss_records[1]:,} vs {rss_records[0]:,} records",
                        "MiB", large["res.client_rss_mib_max"], small["res.client_rss_mib_max"], "other"))
    return pd.DataFrame(rows)


def save(table: pd.DataFrame) -> Path:
    """Write the table under data/bench/ (atomically) and return its path."""
    folder = data_dir() / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bench-{datetime.now():%Y%m%d-%H%M%S}.csv"
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path
