"""docs/profiles.md's tables of counts say what ``kperf study --plan`` computes, so the docs cannot drift from it."""

from __future__ import annotations

import re

import pytest

from kperf.study import experiment, plan, profiles
from kperf.study.experiment import PROFILES
from tests.helpers import ROOT

PAGE = ROOT / "docs" / "profiles.md"


def table(first_heading: str) -> dict[str, dict[str, str]]:
    """The Markdown table whose first column is headed ``first_heading``: its rows by first cell, cells by heading."""
    lines = PAGE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_heading} |"))
    headings = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows: dict[str, dict[str, str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        name = cells[0].split("`")[1] if cells[0].startswith("`") else cells[0]  # "`quick` (default)": quick
        rows[name] = dict(zip(headings, cells))
    return rows


def number(text: str) -> int:
    return int(text.replace(",", ""))


def span(text: str) -> tuple[int, int]:
    """"1-4" or "1,677-20,000" as (1, 4) or (1677, 20000); a single number as (n, n)."""
    low, _, high = text.partition("-")
    return number(low), number(high or low)


def counted(profile: str) -> dict[str, tuple[int, int, list[int], int]]:
    """Each experiment's points, units, record counts and repeats under ``profile``, as the plan computes them."""
    found = {}
    for name in experiment.names():
        settings = profiles.parameters(name, profile)
        grid = experiment.get(name).points(settings)
        found[name] = (len(grid), len(plan.units(name, settings)), [p.workload.records for p in grid],
                       settings["repeats"])
    return found


def cell(text: str) -> tuple[int, bool]:
    """"22" or "22 (named only)": the count, and whether the profile's whole study leaves the experiment out."""
    count, _, note = text.partition(" ")
    return number(count), note == NAMED_ONLY


NAMED_ONLY = "(named only)"
TOTAL = "whole study"


@pytest.mark.parametrize("profile", PROFILES)
def test_each_experiments_points_and_units_are_the_plans(profile: str) -> None:
    rows = table("experiment")
    plans = counted(profile)
    assert set(rows) - {TOTAL} == set(plans)
    left_out = set(plan.left_out(profile))
    for name, (points, units, _, _) in plans.items():
        shown = cell(rows[name][f"{profile} points"]), cell(rows[name][f"{profile} units"])
        assert shown == ((points, name in left_out), (units, name in left_out)), name
    total = rows[TOTAL]
    studied = [p for name, p in plans.items() if name not in left_out]
    assert number(total[f"{profile} points"]) == sum(p[0] for p in studied)
    assert number(total[f"{profile} units"]) == sum(p[1] for p in studied)


@pytest.mark.parametrize("profile", PROFILES)
def test_each_profiles_summary_is_the_plans(profile: str) -> None:
    """The summary describes the profile's whole study (``kperf study --profile P``, naming no experiment)."""
    row = table("profile")[profile]
    whole = plan.check_experiments([], profile)
    plans = [p for name, p in counted(profile).items() if name in whole]
    assert span(row["points per experiment"]) == (min(p[0] for p in plans), max(p[0] for p in plans))
    records = [r for p in plans for r in p[2]]
    assert span(row["records per point"]) == (min(records), max(records))
    assert {p[3] for p in plans} == {number(row["repeats"])}
    assert number(row["units in all"]) == sum(p[1] for p in plans)


def test_the_units_in_all_are_what_plan_shows() -> None:
    """The plan's own printout (``kperf study --plan``) sums to the table's totals."""
    totals = table("experiment")[TOTAL]
    for profile in PROFILES:
        shown = plan.show(plan.resolve(plan.check_experiments([], profile), profile, {}))
        units = sum(int(n) for n in re.findall(r"^\w+: (\d+) units$", shown, re.MULTILINE))
        assert units == number(totals[f"{profile} units"])
