"""A run's fitted costs kept as JSON under ``data/sizing/``, keyed by the records they were fitted on, so a plan
from a recorded run answers without loading pandas, numpy or the records again (``kperf plan`` within a second).

The key is the fit's format and every record file's path, size and modification time: a study resumed, or
records added or removed, is fitted again. A cache that cannot be read is fitted again too (never trusted half).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from kperf.paths import data_dir
from kperf.sizing.costs import Ceiling, Cost, Costs
from kperf.sizing.linear import LinearCost

FORMAT = 5  # the costs' fields and how they are fitted: change it when either changes


def key(files: list[Path]) -> str:
    """What the costs of ``files`` depend on, as a file name."""
    digest = hashlib.sha256(f"kperf sizing costs {FORMAT}".encode())
    for path in sorted(files):
        stat = path.stat()
        digest.update(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def path_of(files: list[Path]) -> Path:
    return data_dir() / "sizing" / f"{key(files)}.json"


def read(path: Path) -> tuple[Costs, float] | None:
    """The costs and host cores kept at ``path``, or None when there are none (or none readable)."""
    try:
        kept = json.loads(path.read_text())
        return _costs(kept["costs"]), float(kept["host_cores"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(path: Path, costs: Costs, host_cores: float) -> None:
    """Keep ``costs`` at ``path``, atomically (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"costs": _plain(costs), "host_cores": host_cores}))
    os.replace(tmp, path)


def _plain(costs: Costs) -> dict[str, Any]:
    """The costs as JSON's types (a NaN stays NaN: Python's json writes and reads it back, and only kperf reads this)."""
    return {"fitted": [dataclasses.asdict(cost) for cost in costs.fitted.values()],
            "ceilings": [dataclasses.asdict(ceiling) for ceiling in costs.ceilings.values()],
            "missing": [[name, variant, why] for (name, variant), why in costs.missing.items()],
            "run": costs.run, "codecs": list(costs.codecs), "replication_factors": list(costs.replication_factors)}


def _costs(kept: dict[str, Any]) -> Costs:
    def floats(values: list[Any]) -> tuple[float, ...]:
        return tuple(float(v) for v in values)

    fitted = {}
    for cost in kept["fitted"]:
        model = cost["model"]
        linear = LinearCost(tuple(model["features"]), floats(model["coefficients"]),
                            tuple(floats(row) for row in model["covariance"]), int(model["points"]), float(model["r2"]),
                            float(model["variance"]), floats(model["low"]), floats(model["high"]),
                            float(model["t_quantile"]))
        fitted[(cost["name"], cost["variant"])] = Cost(
            cost["name"], cost["variant"], cost["unit"], linear, tuple(cost["experiments"]),
            (int(cost["record_sizes"][0]), int(cost["record_sizes"][1])),
            (int(cost["replication_factors"][0]), int(cost["replication_factors"][1])))
    ceilings = {c["role"]: Ceiling(c["role"], float(c["mib_per_s"]), float(c["low"]), float(c["high"]), int(c["points"]),
                                   bool(c["at_least"])) for c in kept["ceilings"]}
    return Costs(fitted, ceilings, {(name, variant): why for name, variant, why in kept["missing"]}, kept["run"],
                 tuple(kept["codecs"]), tuple(int(rf) for rf in kept["replication_factors"]))
