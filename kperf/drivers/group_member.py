"""One member of a consumer group that kperf changes under load (kperf.drivers.group_changes): a process of its
own, so that it can be killed outright (SIGKILL) as a crashed consumer is, or told to leave (SIGTERM: it closes
its consumer, which leaves the group at once).

It reports on stdout, one JSON object a line, as it goes (a killed member has said everything up to its death):
when it subscribed, its whole assignment after every change, its records and bytes read so far every
:data:`REPORT_S` while they grow, that it is leaving (holding nothing from then) and that it closed. Run as
``python -m kperf.drivers.group_member SPEC``, SPEC the JSON of :class:`MemberSpec`.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaException

from kperf.kafka import clients

REPORT_S = 0.1  # how often a reading member reports its counts: the resolution of a pause in reading
POLL_S = 0.05
BATCH = 500


@dataclass(frozen=True)
class MemberSpec:
    """What a member reads, in which group, with which librdkafka settings (group.protocol among them)."""

    bootstrap: str
    topic: str
    group: str
    config: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "config": dict(self.config)})


def _say(**fields: Any) -> None:
    print(json.dumps({"t": time.time(), **fields}), flush=True)


def run(spec: MemberSpec) -> None:
    """Read ``spec.topic`` in ``spec.group`` until SIGTERM, reporting as the module says."""
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    changed: list[bool] = []
    consumer = clients.made(Consumer, clients.client_config(spec.bootstrap, {
        "group.id": spec.group, "auto.offset.reset": "earliest", **spec.config}))
    consumer.subscribe([spec.topic], on_assign=lambda c, p: changed.append(True),
                       on_revoke=lambda c, p: changed.append(True), on_lost=lambda c, p: changed.append(True))
    _say(event="subscribed")
    records = size = reported = 0
    next_report = time.time() + REPORT_S
    try:
        while not stopping:
            for message in consumer.consume(BATCH, POLL_S):
                if message.error() is None:
                    records += 1
                    size += len(message.value() or b"")
            if changed:
                changed.clear()
                _say(assigned=sorted(p.partition for p in consumer.assignment()))
            if (now := time.time()) >= next_report:
                if records != reported:
                    _say(read=records, bytes=size)
                    reported = records
                next_report = now + REPORT_S
    finally:
        if records != reported:
            _say(read=records, bytes=size)
        _say(event="leaving", assigned=[])  # it reads nothing more: what it held waits for the others from now
        try:
            consumer.close()  # leaves the group: its partitions go to the others at once
        except KafkaException as exc:
            _say(event="close failed", error=str(exc))
        else:
            _say(event="closed")


if __name__ == "__main__":
    values = json.loads(sys.argv[1])
    run(MemberSpec(**values))
