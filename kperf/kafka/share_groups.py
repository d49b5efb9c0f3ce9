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

import logging
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kperf.errors import KperfError
from kperf.kafka import clients, groups

LOG = logging.getLogger(__name__)
TIMEOUT_S = 30.0  # for one admin request
# A closed member leaves its group at once; a crashed one after share.session.timeout.ms (45 s by default).
EMPTY_TIMEOUT_S = 60.0
# Errors a deletion retries until EMPTY_TIMEOUT_S: members still leaving; a topic the group read deleted just before,
# whose share state the coordinators drop only when the deletion reaches them (KAFKA-19201), until when the group's
# own deletion fails on that topic (CI, 2026-11-26); and a deletion not answered in its request's time-out (once in
# 20 runs of a test deleting its topic first).
PASSING = {KafkaError.NON_EMPTY_GROUP, KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._TIMED_OUT}
POLL_S = 0.2


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


def _alter(admin: AdminClient, group: str, settings: Mapping[str, str], operation: AlterConfigOpType) -> None:
    if not settings:  # the admin client refuses an empty change
        return
    entries = [ConfigEntry(name, value if operation == AlterConfigOpType.SET else None, incremental_operation=operation)
               for name, value in settings.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    for future in admin.incremental_alter_configs([resource], request_timeout=TIMEOUT_S).values():
        future.result(timeout=TIMEOUT_S)


def _delete_group(admin: AdminClient, group: str) -> None:
    """Delete ``group`` once its members have left (a group with members cannot be deleted) and the coordinators
    have forgotten any topic deleted under it, within a bound."""
    deadline = time.monotonic() + EMPTY_TIMEOUT_S
    while True:
        try:
            # The request's own time-out ends it first (a KafkaException), and the loop asks again.
            admin.delete_consumer_groups([group], request_timeout=TIMEOUT_S)[group].result(timeout=2 * TIMEOUT_S)
            return
        except KafkaException as exc:
            error = exc.args[0]
            if error.code() == KafkaError.GROUP_ID_NOT_FOUND:  # no member ever joined
                return
            if error.code() not in PASSING or time.monotonic() >= deadline:
                raise KperfError(f"could not delete share group {group}: {error.str()}") from None
        time.sleep(POLL_S)


@contextmanager
def configured(bootstrap: str, group: str, settings: Mapping[str, object]) -> Iterator[dict[str, str]]:
    """``settings`` set on share group ``group`` for the block (yielding them as set, to be recorded); after it,
    the group deleted and its settings with it, whatever happened. A value the cluster refuses is a one-line
    error before the block."""
    checked = check(settings)
    admin = clients.admin(bootstrap)
    try:
        _alter(admin, group, checked, AlterConfigOpType.SET)
    except KafkaException as exc:
        raise KperfError(f"the cluster at {bootstrap} refused share group settings "
                         f"{', '.join(f'{k}={v}' for k, v in checked.items())}: {exc.args[0].str()}") from None
    try:
        yield checked
    except BaseException:
        _clean_up(admin, group, checked, quietly=True)  # the block's own error is the one to see
        raise
    _clean_up(admin, group, checked)


@contextmanager
def fresh(bootstrap: str, settings: Mapping[str, object]) -> Iterator[str]:
    """A share group of kperf's own (:func:`kperf.kafka.groups.fresh_name`) with ``settings`` set for the block, as
    :func:`configured` does: every share consumer kperf runs, whichever client, reads in one."""
    group = groups.fresh_name()
    with configured(bootstrap, group, settings):
        yield group


def _clean_up(admin: AdminClient, group: str, settings: Mapping[str, str], quietly: bool = False) -> None:
    """The group deleted, then its settings (they outlive it); ``quietly``: a failure logged, not raised."""
    try:
        try:
            _delete_group(admin, group)
        finally:
            _alter(admin, group, settings, AlterConfigOpType.DELETE)
    except (KperfError, KafkaException, TimeoutError) as exc:  # TimeoutError: an admin future's own bound
        if quietly:
            LOG.warning("share group %s not cleaned up: %s", group, exc)
        elif isinstance(exc, KafkaException):
            raise KperfError(f"could not remove share group {group}'s settings: {exc.args[0].str()}") from None
        elif isinstance(exc, TimeoutError):
            raise KperfError(f"could not remove share group {group}: the cluster did not answer within "
                             f"{2 * TIMEOUT_S:g} s") from None
        else:
            raise
