"""Share groups (KIP-932) as the cluster holds them: a group's settings set before load and taken back after.

A share group's settings belong to the group, not to its consumers: where it starts
(``share.auto.offset.reset``), how long a delivered record stays locked, how often it may be delivered, how many
records a partition may have in flight. A ``ShareConsumer`` with the defaults starts at the latest offset: on
2026-11-24 one read 0 of the 20,000 records already in its topic in 60 s. So kperf sets what a point needs on the
group before any member joins (Kafka accepts a group's settings before the group exists: the controller checks only
its name), records them, and afterwards deletes the group and the settings (which outlive the group).

The checks here are the settings' own (Kafka 4.3.1's ``GroupConfig``): a name it knows, a value of its kind at its
own minimum. The brokers narrow the ranges further with their ``group.share.*`` bounds (a lock of 15 to 60 s by
default); a value outside them is refused by the cluster when it is set, still before any load, in one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from kperf.errors import KperfError
from kperf.kafka import groups


@dataclass(frozen=True)
class Setting:
    """One group setting kperf may set: a whole number at ``minimum`` or more, or one of ``choices`` (text)."""

    doc: str
    minimum: int | None = None
    choices: re.Pattern[str] | None = None
    example: str = ""


SETTINGS = {
    "share.auto.offset.reset": Setting("where a new share group starts", choices=re.compile(
        r"earliest|latest|by_duration:P.+"), example="earliest, latest or by_duration:PT1H"),
    "share.record.lock.duration.ms": Setting("how long a delivered record stays locked to its consumer", 1000),
    "share.delivery.count.limit": Setting("deliveries of a record before it is archived", 2),
    "share.partition.max.record.locks": Setting("records a partition may have delivered and not yet acknowledged", 100),
    "share.isolation.level": Setting("whether records of open transactions are delivered", choices=re.compile(
        r"read_committed|read_uncommitted"), example="read_committed or read_uncommitted"),
    "share.session.timeout.ms": Setting("how long a silent member stays in the group", 1),
    "share.heartbeat.interval.ms": Setting("how often a member heartbeats", 1),
}


def check(settings: Mapping[str, object]) -> dict[str, str]:
    """``settings`` as Kafka takes them (text), or a one-line error naming the first bad one."""
    checked = {}
    for name, value in settings.items():
        setting = SETTINGS.get(name)
        if setting is None:
            raise KperfError(f"unknown share group setting {name!r}: kperf sets {', '.join(SETTINGS)}")
        text = str(value).strip()
        if setting.choices is not None:
            if not setting.choices.fullmatch(text):
                raise KperfError(f"share group setting {name} must be {setting.example}, got {value!r}")
        elif isinstance(value, bool) or not re.fullmatch(r"\d+", text) or int(text) < (setting.minimum or 0):
            raise KperfError(f"share group setting {name} ({setting.doc}) must be a whole number of at least "
                             f"{setting.minimum}, got {value!r}")
        checked[name] = text
    return checked


@contextmanager
def configured(bootstrap: str, group: str, settings: Mapping[str, object]) -> Iterator[dict[str, str]]:
    """``settings`` checked here, then set on share group ``group`` for the block (yielding them as set, to be
    recorded); after it, the group deleted and its settings with it (:func:`kperf.kafka.groups.configured`)."""
    with groups.configured(bootstrap, group, check(settings), "share group") as checked:
        yield checked


@contextmanager
def fresh(bootstrap: str, settings: Mapping[str, object]) -> Iterator[str]:
    """A share group of kperf's own (:func:`kperf.kafka.groups.fresh_name`) with ``settings`` set for the block, as
    :func:`configured` does: every share consumer kperf runs, whichever client, reads in one."""
    group = groups.fresh_name()
    with configured(bootstrap, group, settings):
        yield group
