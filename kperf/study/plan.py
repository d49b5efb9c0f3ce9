"""What a study would measure: each experiment's checked settings and its units, in measuring order.

A unit is one point measured once with one client. The plan interleaves
repeats (every point once, then again), so a slow drift of the machine spreads
over all points instead of biasing the last ones. Nothing here touches a
cluster or imports a driver, so ``kperf study --plan`` and every bad-input
error answer at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kperf.errors import KperfError
from kperf.study import experiment, profiles
from kperf.study.experiment import Point, Settings


@dataclass(frozen=True)
class Unit:
    point: Point
    client: str
    repeat: int

    @property
    def key(self) -> tuple[str, str, int]:
        return self.point.name, self.client, self.repeat


def units(name: str, settings: Settings) -> list[Unit]:
    """Every unit of experiment ``name``, in measuring order."""
    grid = experiment.get(name).points(settings)
    return [Unit(p, c, r) for r in range(settings["repeats"]) for p in grid for c in settings["clients"] if p.runs_on(c)]


def check_experiments(names: Sequence[str], profile: str | None) -> list[str]:
    """``names`` checked (an unknown one is an error), or, when none is named, the whole study of ``profile``
    (resolved as :func:`kperf.study.profiles.resolve_profile` does): every experiment it does not leave out."""
    for name in names:
        experiment.get(name)
    return list(names) or [name for name in experiment.names() if name not in left_out(profile)]


def left_out(profile: str | None) -> list[str]:
    """The experiments ``profile``'s whole study leaves out (each runs when named)."""
    return [e.name for e in experiment.registered() if profiles.resolve_profile(profile) not in e.whole_study]


def resolve(
    names: Sequence[str], profile: str | None, overrides: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each experiment's checked settings: the profile's, with the overrides; an error names the first bad one."""
    unused = sorted(set(overrides) - {"*"} - set(names))
    if unused:
        raise KperfError(f"overrides given for experiment {unused[0]!r}, which this study does not run")
    return {name: profiles.parameters(name, profile, **profiles.overrides_for(name, overrides)) for name in names}


def study_workers(settings: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The Dask scheduler the experiments' ``workers`` name (``--set workers=...``), one for the whole study; None:
    as $KPERF_WORKERS says (``--workers``). Recorded in the study file, so a resumed study uses it again."""
    named = sorted({str(s["workers"]) for s in settings.values() if s.get("workers")})
    if len(named) > 1:
        raise KperfError(f"parameter 'workers': one Dask scheduler per study, got {', '.join(named)}")
    return named[0] if named else None


def show(settings: Mapping[str, Settings]) -> str:
    """What a study would measure: each experiment's checked ``settings`` and number of units (nothing runs)."""
    lines = []
    for name, values in settings.items():
        lines.append(f"{name}: {len(units(name, values))} units")
        lines += [f"  {key} = {value}" for key, value in values.items()]
    return "\n".join(lines)
