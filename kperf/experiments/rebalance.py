"""How long a rebalance stalls a consumer group (kperf's own; no published study swept it): a group of members
reading a paced producer while one member joins, leaves cleanly or is killed, under the classic group protocol and
KIP-848's consumer protocol, both at the same session time-out, the lowest both allow on the cluster
(kperf.drivers.group_changes). Per change: how long no member read, how far the group's lag rose, and the time
until the assignment was whole again and the lag back at its calm level, the producer sending on meanwhile.

The Python client only: a member here must say what it holds as it goes and leave its group cleanly when told, and
the stock Java consumer tool prints no assignment and, on a signal, exits without closing its consumer (its
consumer is closed only when its read ends), so its leave would be a crash.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.load import GROUP_EVENTS, GROUP_PROTOCOLS, GroupChange
from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd

COSTS = ("pause_s", "lag_peak_records", "recovered_s", "rebalance_s")  # what a change cost (group_changes)
WORDS = (  # the answer's figures: column, words, unit, number format
    ("form_s", "The group formed in", " s", ".2f"),
    ("pause_s", "No member read for at most (members report every 0.1 s)", " s", ".2f"),
    ("rebalance_s", "The assignment was whole and balanced again after", " s", ".2f"),
    ("recovered_s", "The lag was back at its calm level after", " s", ".2f"),
    ("lag_peak_records", "The lag peaked at", " records", ",.0f"),
)


def grid(s: Settings) -> list[Point]:
    points = []
    for protocol in s["protocols"]:
        for event in s["events"]:
            recover = s["kill_recover_s"] if event == "kill" else s["recover_s"]
            change = GroupChange(event, s["members"], s["change_at_s"], recover)
            # The producer sends on until the change had time to recover, and a second more: the change comes a
            # little after its time (the lag sampled, a joiner's start), and a window must not end unloaded.
            seconds = change.at_s + change.recover_s + 1.0
            points.append(point(
                f"protocol={protocol} {event}",
                workload(s, {"acks": "all"}, records=math.ceil(s["rate"] * seconds), rate=s["rate"],
                         consumers=s["members"], consumer_config={"group.protocol": protocol}, group_change=change),
                clients=("python",), event=event, change_at_s=change.at_s, recover_s=change.recover_s,
            ))
    return points


def rules(s: Settings) -> None:
    """The Python client only; a group a leave or kill leaves someone in; the change after the calm lag is known."""
    if "java" in s.get("clients", ()):
        raise KperfError("parameter 'clients' of experiment 'rebalance': its members report what they hold as they go "
                         "and leave when told, which the stock Java tool cannot, so it runs the python client only")
    for event in s.get("events", ()):
        GroupChange(event, s.get("members", 2), s.get("change_at_s", 3.0), s.get("recover_s", 1.0)).check()
    if s.get("change_at_s", 3.0) < 2:
        raise KperfError("parameter 'rebalance.change_at_s' must be at least 2 s: the calm lag the change is judged "
                         "against is sampled from 1 s into the load (the members' first commits) until the change")


def analyze(results: pd.DataFrame) -> Finding:
    """Per change and protocol: the median pause, lag peak, time to recover and to rebalance, with intervals."""
    from kperf.analysis import findings, stats

    rows = results[results["role"] == "consumer"]
    parts = []
    for event, mine in rows.groupby("param.event", sort=False):
        said = []
        tables = []
        for column, what, unit, spec in WORDS:
            if column not in mine or mine[column].isna().all():
                continue
            summary = stats.summarize(mine, ["param.group.protocol"], column)
            said.append(f"{what}: " + "; ".join(
                f"{row['param.group.protocol']} {findings.interval(row, unit, spec)}" for _, row in summary.iterrows()))
            tables.append(summary.assign(metric=column, client="python", event=event))
        timeout = mine["session_timeout_ms"].max() if "session_timeout_ms" in mine else float("nan")
        parts.append((f"A member's {event} ({int(mine['members'].max())} members, session time-out "
                      f"{findings.number(timeout)} ms for both protocols). " + ". ".join(said) + ".",
                      findings.concat(tables)))
    return findings.tabled("rebalance", parts)


register(Experiment(
    name="rebalance",
    title="A consumer group changing under load",
    question="How long does a rebalance stall my consumers, classic against the consumer protocol?",
    measure=("pause_s", "lowest"),
    order=98,
    params={
        **common("record_size", "partitions", "replication_factor"),
        "protocols": Param(str, "group protocols (group.protocol)", many=True, choices=GROUP_PROTOCOLS),
        "events": Param(str, "changes: a member joins, leaves (closes) or is killed (SIGKILL)", many=True,
                        choices=GROUP_EVENTS),
        "members": Param(int, "members of the group before the change", minimum=1),
        "rate": Param(float, "the producer's steady rate (records/s)", minimum=1),
        "change_at_s": Param(float, "seconds into the load when the member changes", minimum=0, above=True),
        "recover_s": Param(float, "seconds a join or leave may take to recover (the producer sends on that long)",
                           minimum=0, above=True),
        "kill_recover_s": Param(float, "seconds a kill may take to recover: more than the session time-out",
                                minimum=0, above=True),
    },
    profiles={
        # Joins and leaves only: a kill waits for the session time-out (6 s on kperf's cluster).
        # The classic protocol alone: the consumer protocol's join, leave and kill are measured by
        # tests/cluster/test_group_changes.py, and each unit here costs some 25 s of CI.
        "smoke": {"protocols": ["classic"], "events": ["join", "leave"],
                  "members": 2, "partitions": 4, "replication_factor": 3, "rate": 2_000, "change_at_s": 3.0,
                  "recover_s": 12.0, "kill_recover_s": 20.0},
        "quick": {"clients": ["python"], "extra_repeats": 0, "protocols": ["classic", "consumer"],
                  "events": ["join", "leave", "kill"], "members": 3, "partitions": 6, "replication_factor": 3,
                  "rate": 5_000, "change_at_s": 4.0, "recover_s": 15.0, "kill_recover_s": 25.0},
        "seed": {"clients": ["python"], "extra_repeats": 0, "protocols": ["classic", "consumer"],
                 "events": ["join", "leave", "kill"], "members": 6, "partitions": 12, "replication_factor": 3,
                 "rate": 20_000, "change_at_s": 10.0, "recover_s": 30.0, "kill_recover_s": 60.0},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(Panel("consumer", "param.event", y, series=("param.group.protocol",), categorical=True)
                 for y in COSTS),
    rules=rules,
    # Kills wait for session time-outs: named only under smoke (joins and leaves) and seed, as the issue asks.
    whole_study=("smoke", "seed"),
))
