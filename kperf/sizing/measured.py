"""A measured run as a plan reads it: its records' fitted costs and its host's cores, or one line saying why not."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kperf import broker_columns
from kperf.errors import KperfError
from kperf.sizing import cache
from kperf.sizing.costs import Costs
from kperf.study import runs

if TYPE_CHECKING:
    import pandas as pd

# The columns of a broker view: a run without any of them cannot give a broker's cost.
BROKER_VIEW = ("res.broker_cpu_pct", broker_columns.CPU_CORES)


def costs_of(folders: list[Path]) -> tuple[Costs, float]:
    """The costs fitted on the records of ``folders`` (studies' or capacity runs'; a study's capacity sub-folder
    too), and the cores of the host that measured them, from the cache when those records were fitted before; a
    folder that does not exist, holds no records, or no broker view, refused in one line naming it."""
    kept = cache.path_of([file for folder in folders for file in _files(folder)])
    found = cache.read(kept)
    if found is not None:
        return found
    import pandas as pd

    from kperf.sizing.fitting import fitted

    records = records_of(folders)
    cores = float(pd.to_numeric(records.get("env.cpu_count"), errors="coerce").max())
    costs = fitted(records, ", ".join(folder.name for folder in folders))
    cache.write(kept, costs, cores)
    return costs, cores


def records_of(folders: list[Path]) -> pd.DataFrame:
    """The records of ``folders`` together (each refused as :func:`costs_of` says)."""
    import pandas as pd

    return pd.concat([_records(folder) for folder in folders], ignore_index=True)


def capacity_runs(folders: list[Path]) -> list[dict[str, Any]]:
    """The verdicts (capacity.json) of the capacity runs among ``folders`` (or in a study's capacity sub-folder),
    oldest first, each once: a run given twice (its folder and its id, or a copy) has the same workload and start."""
    found = [json.loads(verdict.read_text()) for run in folders
             for verdict in (run / runs.VERDICT_FILE, run / runs.CAPACITY / runs.VERDICT_FILE) if verdict.is_file()]
    once = {(v["workload"]["name"], str(v.get("started", ""))): v for v in found}
    return [once[key] for key in sorted(once, key=lambda key: key[1])]


def verdicts(folders: list[Path]) -> dict[str, dict[str, Any]]:
    """The verdict of each workload's latest capacity run among ``folders``, by workload name: an older run of the
    same workload is superseded."""
    return {v["workload"]["name"]: v for v in capacity_runs(folders)}


def on_local_cluster(verdict: Mapping[str, Any]) -> bool:
    """Whether a capacity run loaded kperf's local cluster: its brokers shared the load's host, whose every resource
    kperf sampled."""
    return bool(verdict.get("environment", {}).get("cluster") == runs.LOCAL)


def capacity_limit(verdict: Mapping[str, Any]) -> tuple[float | None, float | None] | None:
    """The limit a capacity run measured on kperf's local cluster: the highest rate confirmed to hold every SLO and
    the lowest confirmed to fail one (None: not confirmed); None for a run on another cluster (its brokers did not
    share the load's host) or without a confirmed rate."""
    headroom = verdict.get("headroom") or {}
    if not on_local_cluster(verdict) or not (headroom.get("low") or headroom.get("high")):
        return None
    return headroom.get("low"), headroom.get("high")


def _stores(run: Path) -> list[Path]:
    """The result folders of a run: its own, and its capacity sub-folder's (kperf study --workload)."""
    return [folder / "results" for folder in (run, run / runs.CAPACITY) if (folder / "results").is_dir()]


def _files(run: Path) -> list[Path]:
    if not run.is_dir():
        raise KperfError(f"--from {run}: no such run folder (a study's data/runs/<id> or a capacity run's "
                         "data/capacity/<id>)")
    files = [file for store in _stores(run) for file in store.glob("*.parquet")]
    if not files:
        raise KperfError(f"--from {run}: it holds no result records (results/*.parquet)")
    return files


def _records(run: Path) -> pd.DataFrame:
    import pandas as pd

    from kperf.results import ResultStore

    _files(run)
    records = pd.concat([ResultStore(store).load() for store in _stores(run)], ignore_index=True)
    if not any(column in records and records[column].notna().any() for column in BROKER_VIEW):
        raise KperfError(f"--from {run}: its records hold no broker view (the brokers' CPU, sampled on a local "
                         "cluster or read from their exporters with --broker-metrics): no broker cost can be fitted")
    return records
