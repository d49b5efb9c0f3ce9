"""Tables for people: drawn by great_tables in HTML, as a plain pipe table in the Markdown twin.

No index column; column names carry their units; numbers are formatted to the
precision they have (rates to three significant digits when they are known to
a few percent, ratios to two decimals); a table longer than ``LONG`` rows is
collapsed behind a summary line that says what it holds.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from great_tables import GT, loc, style

from kperf.analysis import findings

LONG = 12  # rows shown open; longer tables are collapsed (<details>)
MARK_COLOUR = "#fdf1d8"  # the background of marked rows (unstable, limited, imprecise): light, and readable in print


def rate(value: object) -> str:
    """A rate to three significant digits with thousands separators (12,300): repeats rarely agree closer."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return ""
    if value == 0:
        return "0"
    return f"{float(f'{value:.3g}'):,.{max(0, 2 - math.floor(math.log10(abs(value))))}f}"


def ratio(value: object) -> str:
    """A ratio to two decimals (x1.23)."""
    return f"x{value:.2f}" if isinstance(value, int | float) and math.isfinite(value) else ""


def share(value: object) -> str:
    """A fraction as a percentage (12%)."""
    return f"{value:.0%}" if isinstance(value, int | float) and math.isfinite(value) else ""


def plain(value: object) -> str:
    """Anything else, spelled as it reads: 1 not 1.0, nothing for missing values, yes/no for flags."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


@dataclass
class Table:
    """A table as the report shows it: ``columns`` maps each shown column to its heading (with its unit) and
    ``formats`` a column to its formatter (:func:`plain` by default); ``marked`` flags the rows to highlight,
    with ``note`` saying why."""

    data: pd.DataFrame
    columns: Mapping[str, str]
    title: str = ""
    formats: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    marked: pd.Series | None = None
    note: str = ""

    def text(self) -> pd.DataFrame:
        """The shown columns, formatted and renamed: what both renderings print."""
        shown = self.data[list(self.columns)].reset_index(drop=True)
        formatted = {c: shown[c].map(self.formats.get(c, plain)) for c in self.columns}
        return pd.DataFrame(formatted).rename(columns=dict(self.columns))

    def _repr_html_(self) -> str:
        text = self.text()
        table = GT(text).tab_options(table_font_size="13px", data_row_padding="3px").opt_horizontal_padding(0.6)
        if self.title:
            table = table.tab_header(self.title)
        numeric = [self.columns[c] for c in self.columns if c in self.formats]
        if numeric:
            table = table.cols_align("right", columns=numeric)
        rows = self._marked_rows()
        if rows:
            table = table.tab_style(style.fill(MARK_COLOUR), loc.body(rows=rows))
        if self.note:
            table = table.tab_source_note(self.note)
        body = table.as_raw_html()
        if len(text) <= LONG:
            return body
        summary = html.escape(f"{self.title or 'Table'}: {len(text)} rows (click to open)")
        return f"<details><summary>{summary}</summary>{body}</details>"

    def _repr_markdown_(self) -> str:
        text = self.text()
        if self.marked is not None:
            first = text.columns[0]
            text[first] = [f"{v} *" if m else v for v, m in zip(text[first], self._flags())]
        parts = [f"**{self.title}**", ""] if self.title else []
        parts.append(text.to_markdown(index=False))
        if self.note:
            parts += ["", ("\\* " if self.marked is not None else "") + self.note]
        return "\n".join(parts)

    def _flags(self) -> list[bool]:
        return [] if self.marked is None else [bool(m) for m in self.marked.reset_index(drop=True)]

    def _marked_rows(self) -> list[int]:
        return [i for i, m in enumerate(self._flags()) if m]


HEADINGS = {  # column -> heading with its unit, for the tables kperf's analysis returns
    "param.client": "client", "n": "repeats", "median": "median", "min": "min", "max": "max", "cv": "CV",
    "median_low": "median CI low", "median_high": "median CI high", "coverage": "CI coverage",
    "unstable": "unstable (CV > 10%)", "steady_median": "steady records/s (median)",
    "precision": "precision (95% half-width)", "precise": "precise", "limit": "limited by",
    "se": "standard error", "ci95_low": "95% CI low", "ci95_high": "95% CI high", "r_squared": "R²",
    "java_over_python": "java / python", "python": "python records/s", "java": "java records/s",
}
SHARES = {"cv", "coverage", "precision"}


def heading(column: str) -> str:
    """A column's heading: a fixed one, else its name without the ``param.`` prefix."""
    return HEADINGS.get(column, column.removeprefix("param.").replace("_", " "))


def of(data: pd.DataFrame, title: str = "", unit: str = "", marked: pd.Series | None = None, note: str = "") -> Table:
    """Any analysis table for people: every column headed (``unit`` after the median and its interval's bounds),
    numbers formatted (rates to three significant digits when ``unit`` is records/s, shares as percentages, the
    rest by :func:`kperf.analysis.findings.number`)."""
    data = data.reset_index(drop=True) if not isinstance(data.index, pd.RangeIndex) else data
    measured = [c for c in ("median", "min", "max", "median_low", "median_high", "steady_median") if c in data]
    columns = {c: heading(c) + (f" {unit}" if unit and c in measured and c != "steady_median" else "") for c in data.columns}
    formats = {c: share if c in SHARES else rate if unit == "records/s" and c in measured else findings.number
               for c in data.select_dtypes("number").columns if data[c].dtype != bool}
    return Table(data, columns, title, formats, marked, note)
