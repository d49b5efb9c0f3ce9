"""What an experiment's analysis returns: a ``Finding`` (its sentences, table and details) and the ``Curve``\\ s
drawn on its figure.

The record lives here, beside :mod:`kperf.study.experiment` whose ``Experiment.analyze`` returns one, so the
registry names the type without importing the analysis above it; :mod:`kperf.analysis.findings` holds the
methods that make one. Nothing here loads pandas: planning a study never needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Curve:
    """A fitted line for one panel of an experiment's figure (matched on role, x and y)."""

    role: str
    x: str
    y: str
    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]


@dataclass(frozen=True)
class Finding:
    """What one experiment says: answers for the report's summary, details (why a model was chosen),
    a table, and curves to draw.

    ``table`` holds fitted parameters (``kperf.analysis.findings.FIT_COLUMNS``) for fitted experiments,
    and the ranking with each setting's median interval for compared ones.
    """

    experiment: str
    answers: tuple[str, ...]
    table: pd.DataFrame
    curves: tuple[Curve, ...] = ()
    details: tuple[str, ...] = ()
