"""Consumer groups as the cluster sees them: a new group's name, and waiting, within a bound, until groups have formed.

A producer whose load is to be read as it is sent (a capacity trial) waits here
before its clock starts, so that a group that forms slowly (a Kafka-API system,
a busy coordinator, a large group.initial.rebalance.delay.ms) delays the trial
instead of passing for end-to-end latency or lag.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from confluent_kafka import ConsumerGroupState, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import clients

LOG = logging.getLogger(__name__)
POLL_S = 0.1  # how often the groups are asked for
REQUEST_TIMEOUT_S = 5.0
TIMEOUT_S = 30.0  # for one admin request changing a group
APPLIED_POLL_S = 0.1  # between asking the brokers that had not yet applied a group's settings
# A closed member leaves its group at once; a crashed one after its session time-out (45 s by default).
EMPTY_TIMEOUT_S = 60.0
# Errors a deletion retries until EMPTY_TIMEOUT_S: members still leaving; a topic a share group read deleted just
# before, whose share state the coordinators drop only when the deletion reaches them (KAFKA-19201), until when the
# group's own deletion fails on that topic (CI, 2026-11-26); and a deletion not answered in its request's time-out
# (once in 20 runs of a test deleting its topic first).
PASSING = {KafkaError.NON_EMPTY_GROUP, KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._TIMED_OUT}
DELETE_POLL_S = 0.2
# The brokers' lowest session time-outs: the classic protocol's, and KIP-848's consumer protocol's.
SESSION_FLOORS = ("group.min.session.timeout.ms", "group.consumer.min.session.timeout.ms")
NOT_FORMED = "consumer group did not form"  # the MeasurementFailed cause, as the consumer's own


def fresh_name(label: str = "") -> str:
    """A group of kperf's own that no one used before: it holds no committed offset, so it reads from where kperf
    says (a consumer group: earliest; a share group: the start kperf sets on it)."""
    return f"kperf-{label + '-' if label else ''}{uuid.uuid4().hex[:12]}"


def formed(admin: AdminClient, groups: Sequence[tuple[str, int]]) -> bool:
    """Whether every group in ``groups`` (name, members expected) is stable with all its members (its partitions
    assigned among them). A group stable with its first member alone rebalances as the others join, and the
    records it then leaves unread would count as end-to-end latency and lag."""
    found = admin.describe_consumer_groups([name for name, _ in groups], request_timeout=REQUEST_TIMEOUT_S)
    try:
        described = {name: future.result() for name, future in found.items()}
    except KafkaException:  # not known yet (no member has reached its coordinator)
        return False
    return all(described[name].state == ConsumerGroupState.STABLE and len(described[name].members) >= max(members, 1)
               for name, members in groups)


def wait_formed(bootstrap: str, groups: Sequence[tuple[str, int]], timeout_s: float) -> None:
    """Return once every group in ``groups`` (name, members expected) has formed with all its members; fail the
    unit in one line after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    admin = clients.admin(bootstrap)
    while not formed(admin, groups):
        if time.monotonic() >= deadline:
            named = ", ".join(f"{name} ({members} member{'s' if members != 1 else ''})" for name, members in groups)
            raise MeasurementFailed(f"consumer group {named} did not form within {timeout_s:g} s on {bootstrap} "
                                    f"(raise join_timeout_s if the cluster forms groups slowly)", NOT_FORMED, timed_out=True)
        time.sleep(POLL_S)


def session_timeout_floor(bootstrap: str) -> int:
    """The lowest session time-out (ms) both group protocols allow on ``bootstrap``'s brokers (the larger of their
    floors, :data:`SESSION_FLOORS`, as one broker reports them): a comparison of the protocols uses it for both."""
    admin = clients.admin(bootstrap)
    broker = min(clients.metadata(bootstrap).brokers)
    resource = ConfigResource(ResourceType.BROKER, str(broker))
    try:
        found = admin.describe_configs([resource], request_timeout=REQUEST_TIMEOUT_S)[resource].result(timeout=TIMEOUT_S)
    except KafkaException as exc:
        raise KperfError(f"could not read broker {broker}'s group settings at {bootstrap}: {exc.args[0].str()}") from None
    return max(int(found[name].value) for name in SESSION_FLOORS)


def alter_settings(admin: AdminClient, group: str, settings: Mapping[str, str], operation: AlterConfigOpType) -> None:
    """Set (or delete) ``settings`` on ``group`` (a GROUP config resource; Kafka takes them before the group exists)."""
    if not settings:  # the admin client refuses an empty change
        return
    entries = [ConfigEntry(name, value if operation == AlterConfigOpType.SET else None, incremental_operation=operation)
               for name, value in settings.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    for future in admin.incremental_alter_configs([resource], request_timeout=TIMEOUT_S).values():
        future.result(timeout=TIMEOUT_S)


def delete(admin: AdminClient, group: str, kind: str = "group") -> None:
    """Delete ``group`` once its members have left (a group with members cannot be deleted), within a bound."""
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
                raise KperfError(f"could not delete {kind} {group}: {error.str()}") from None
        time.sleep(DELETE_POLL_S)


@contextmanager
def configured(bootstrap: str, group: str, settings: Mapping[str, str], kind: str = "group") -> Iterator[dict[str, str]]:
    """``settings`` (checked by the caller, as Kafka takes them) set on ``group`` for the block, yielding them to be
    recorded; after it, the group deleted and its settings with it (they outlive the group), whatever happened. A
    value the cluster refuses is a one-line error before the block."""
    admin = clients.admin(bootstrap)
    try:
        alter_settings(admin, group, settings, AlterConfigOpType.SET)
    except KafkaException as exc:
        raise KperfError(f"the cluster at {bootstrap} refused {kind} settings "
                         f"{', '.join(f'{k}={v}' for k, v in settings.items())}: {exc.args[0].str()}") from None
    except TimeoutError:  # unanswered: they may have been set, so they are taken back
        _clean_up(admin, group, settings, kind, quietly=True)
        raise KperfError(f"the cluster at {bootstrap} did not answer setting {kind} {group}'s settings within "
                         f"{TIMEOUT_S:g} s") from None
    try:
        _applied_everywhere(admin, group, settings, kind)
        yield dict(settings)
    except BaseException:
        _clean_up(admin, group, settings, kind, quietly=True)  # the block's own error is the one to see
        raise
    _clean_up(admin, group, settings, kind)


def _applied_everywhere(admin: AdminClient, group: str, settings: Mapping[str, str], kind: str) -> None:
    """Wait, at most TIMEOUT_S, until every broker describes ``settings`` on ``group``, each asked by a client
    bootstrapped to it alone (which asks it first): the controller commits a setting and each broker applies it from
    the metadata log in its own time, so a member whose coordinator had not yet applied it would read at Kafka's
    default (a describe right after the change once saw 'latest' for the 'earliest' just set, 2026-12-02)."""
    if not settings:
        return
    brokers = admin.list_topics(timeout=REQUEST_TIMEOUT_S).brokers.values()
    pending, said = [f"{broker.host}:{broker.port}" for broker in brokers], ""
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        still = []
        for address in pending:
            try:
                if not _describes(clients.admin(address), group, settings):
                    still.append(address)
            except (KafkaException, TimeoutError) as exc:  # not yet answered: asked again until the bound
                still.append(address)
                said = f" (last: {exc})"
        if not (pending := still):
            return
        if time.monotonic() >= deadline:
            raise KperfError(f"{kind} {group}'s settings were not in force on broker(s) {', '.join(pending)} within "
                             f"{TIMEOUT_S:g} s of being set{said}")
        time.sleep(APPLIED_POLL_S)


def _describes(admin: AdminClient, group: str, settings: Mapping[str, str]) -> bool:
    """Whether the broker ``admin`` asks describes every one of ``settings`` on ``group`` with its value."""
    resource = ConfigResource(ResourceType.GROUP, group)
    (described,) = admin.describe_configs([resource], request_timeout=REQUEST_TIMEOUT_S).values()
    entries = described.result(timeout=2 * REQUEST_TIMEOUT_S)
    return all(name in entries and entries[name].value == str(value) for name, value in settings.items())


def _clean_up(admin: AdminClient, group: str, settings: Mapping[str, str], kind: str, quietly: bool = False) -> None:
    """The group deleted, then its settings; ``quietly``: a failure logged, not raised."""
    try:
        try:
            delete(admin, group, kind)
        finally:
            alter_settings(admin, group, settings, AlterConfigOpType.DELETE)
    except (KperfError, KafkaException, TimeoutError) as exc:  # TimeoutError: an admin future's own bound
        if quietly:
            LOG.warning("%s %s not cleaned up: %s", kind, group, exc)
        elif isinstance(exc, KafkaException):
            raise KperfError(f"could not remove {kind} {group}'s settings: {exc.args[0].str()}") from None
        elif isinstance(exc, TimeoutError):
            raise KperfError(f"could not remove {kind} {group}: the cluster did not answer within "
                             f"{2 * TIMEOUT_S:g} s") from None
        else:
            raise
