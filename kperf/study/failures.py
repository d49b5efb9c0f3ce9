"""A run's failed units, in one place: which (experiment, point, client, repeat) and why.

A unit failed when any of its records did (:data:`kperf.results.FAILED`: its measurement raised, or broke a rule of
:mod:`kperf.validity`). The sweep measures such a unit again on ``--resume`` and ``kperf study`` names each on
stderr and exits non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kperf.results import FAILED, ResultStore, failures

if TYPE_CHECKING:
    import pandas as pd

KEY = ["experiment", "point", "param.client", "repeat"]  # the columns naming one unit


@dataclass(frozen=True)
class FailedUnit:
    experiment: str
    point: str
    client: str
    repeat: int
    reason: str  # its records' reasons, each once

    def line(self) -> str:
        """The unit and its reason on one line, as the study lists it on stderr."""
        return f"{self.experiment}: {self.point} [{self.client}, repeat {self.repeat}] failed: {self.reason}"


def failed_units(records: pd.DataFrame) -> list[FailedUnit]:
    """The units of ``records`` with a failed record, in the order they were recorded."""
    failed = failures(records)
    return [FailedUnit(str(e), str(p), str(c), int(r), "; ".join(dict.fromkeys(rows[FAILED].astype(str))))
            for (e, p, c, r), rows in failed.groupby(KEY, sort=False)]


def of_run(run_dir: Path) -> list[FailedUnit]:
    """The failed units of the run in ``run_dir``."""
    return failed_units(ResultStore.of_run(run_dir).load())
