"""Parameter overrides as a user writes them: ``--config FILE.yaml`` and ``--set [EXPERIMENT.]NAME=VALUE``.

Each one is checked where it was written, before any other work: an error
names its file and line (or its ``--set``), its scope (one experiment's
parameter, ``batch.records``, or one given for every experiment that has it,
``repeats``) and, for a misspelled name, the closest valid one. The checked
overrides map each experiment (or :data:`ALL`) to its parameters, as
:func:`kperf.study.profiles.overrides_for` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kperf.errors import KperfError, closest
from kperf.study import experiment
from kperf.study.experiment import Experiment

ALL = "*"  # the section of overrides given for every experiment that has the parameter


class Loader(yaml.SafeLoader):
    """YAML as kperf reads overrides: 1e9 is a number, as in YAML 1.2 (YAML 1.1 reads it as text)."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"), list("-+0123456789")
)


@dataclass(frozen=True)
class Given:
    """One override: its experiment (:data:`ALL`: every one with the parameter), parameter and value, and where
    it was written, as its errors name it (``study.yaml:3``, ``--set repeats=abc``)."""

    section: str
    name: str
    value: Any
    origin: str


def parse(yaml_file: Path | None = None, assignments: Sequence[str] = (),
          experiments: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """The overrides of a YAML file, then of ``--set``s (a later one wins), each checked.

    The YAML file maps experiment names to parameter mappings; parameters at its
    top level apply to every experiment. ``--set`` takes ``[EXPERIMENT.]NAME=VALUE``
    with VALUE in YAML syntax (``[1, 2]`` for a list). A value given for every
    experiment is checked by those of ``experiments`` (None: all) that have it:
    a parameter's range may differ between experiments (``rate`` -1 is
    unthrottled in partitions, not in faults), and only those that run use it.
    """
    overrides: dict[str, dict[str, Any]] = {}
    for one in [*(from_file(yaml_file) if yaml_file is not None else ()), *map(from_assignment, assignments)]:
        check(one, experiments)
        overrides.setdefault(one.section, {})[one.name] = one.value
    return overrides


def from_file(path: Path) -> Iterator[Given]:
    """Each override of the YAML file at ``path``, with its line."""
    try:
        loader = Loader(path.read_text())
    except OSError as exc:
        raise KperfError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        root = loader.get_single_node()
        if root is not None and not isinstance(root, yaml.MappingNode):
            got = type(loader.construct_document(root)).__name__
            raise KperfError(f"{path}:{line(root)}: expected a mapping of experiments to parameters, got {got}")
        if root is not None:
            loader.flatten_mapping(root)  # YAML merge keys (<<: *defaults), as a plain load expands them
        for key, value in root.value if root is not None else ():
            if not isinstance(value, yaml.MappingNode):
                yield Given(ALL, str(key.value), loader.construct_object(value, deep=True), f"{path}:{line(key)}")
                continue
            known(str(key.value), f"{path}:{line(key)}")
            loader.flatten_mapping(value)
            for name, item in value.value:
                yield Given(str(key.value), str(name.value), loader.construct_object(item, deep=True), f"{path}:{line(name)}")
    except yaml.MarkedYAMLError as exc:
        at = f":{exc.problem_mark.line + 1}" if exc.problem_mark is not None else ""
        raise KperfError(f"{path}{at}: not valid YAML: {exc.problem}") from None
    finally:
        loader.dispose()


def line(node: yaml.Node) -> int:
    """The line ``node`` starts on, counted from 1 as editors do."""
    return int(node.start_mark.line) + 1


def from_assignment(assignment: str) -> Given:
    """The override ``--set assignment`` gives."""
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise KperfError(f"--set {assignment!r} is not [EXPERIMENT.]NAME=VALUE")
    section, _, name = key.strip().rpartition(".")
    try:
        value = yaml.load(raw, Loader=Loader)
    except yaml.YAMLError:
        raise KperfError(f"--set {assignment!r}: the value is not valid YAML") from None
    return Given(section or ALL, name, value, f"--set {assignment}")


def known(section: str, origin: str) -> Experiment:
    """The experiment ``section`` names, or an error saying where it was written."""
    try:
        return experiment.get(section)
    except KperfError as exc:
        raise KperfError(f"{origin}: {exc}") from None


def check(one: Given, experiments: Sequence[str] | None = None) -> None:
    """``one``'s experiment, name and value, as each experiment it applies to (of ``experiments``) checks them."""
    try:
        for exp, label in scope(one, experiments):
            exp.params[one.name].parse(label, one.value)
    except KperfError as exc:
        raise KperfError(f"{one.origin}: {exc}") from None


def scope(one: Given, experiments: Sequence[str] | None = None) -> list[tuple[Experiment, str]]:
    """The experiments ``one`` applies to, each with the name its errors give the parameter: ``batch.records``
    for one experiment's, ``repeats`` for one given for all (those of ``experiments`` that have it; None: all)."""
    if one.section != ALL:
        exp = experiment.get(one.section)
        if one.name not in exp.params:
            raise KperfError(f"unknown parameter {one.name!r} for experiment {exp.name!r}{closest(one.name, exp.params)}")
        return [(exp, f"{exp.name}.{one.name}")]
    having = [exp for exp in experiment.registered() if one.name in exp.params]
    if not having:
        every = {name for exp in experiment.registered() for name in exp.params}
        raise KperfError(f"unknown parameter {one.name!r}: no experiment has it{closest(one.name, every)}")
    return [(exp, one.name) for exp in having if experiments is None or exp.name in experiments]
