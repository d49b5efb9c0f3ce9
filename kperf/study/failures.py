"""A run's failed units, in one place: which (experiment, point, client, repeat) and why.

A unit failed when any of its records did (:data:`kperf.results.FAILED`: its measurement raised, or broke a rule of
:mod:`kperf.validity`). The sweep measures such a unit again on ``--resume`` and ``kperf study`` names each on
stderr and exits non-zero; a measuring notebook's last cell (:func:`raise_if_failed`) fails by the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kperf.errors import UnitsFailed
from kperf.results import FAILED, ResultStore, failures

if TYPE_CHECKING:
    import pandas as pd

KEY = ["experiment", "point", "param.client", "repeat"]  # the columns naming one unit
CAUSE = "units failed"  # an experiment's, as raise_if_failed reports it


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


def failure_message(experiment: str, records: pd.DataFrame) -> str | None:
    """Why ``experiment`` failed, by the rule that makes ``kperf study`` exit 3 (:data:`kperf.exits.Exit.FAILED`):
    each failed unit of its ``records`` with its reason, one a line, or that it measured nothing; None when neither."""
    if records.empty:
        return f"{experiment}: nothing measured"
    failed = failed_units(records)
    if not failed:
        return None
    units = len(records.drop_duplicates(KEY))
    return "\n".join([f"{experiment}: {len(failed)} of {units} unit(s) failed", *(f"  {u.line()}" for u in failed)])


def raise_if_failed(experiment: str, records: pd.DataFrame) -> None:
    """A measuring notebook's last cell: its experiment failed (:func:`failure_message`), so the notebook does, after
    its tables and figures, under nbval, papermill or JupyterLab alike, with the units named here rather than a
    traceback from the code that went on past them. ``kperf study`` tells :class:`~kperf.errors.UnitsFailed` from
    other failures and goes on (it names the same units when it ends)."""
    if (message := failure_message(experiment, records)) is not None:
        raise UnitsFailed(message, CAUSE)
