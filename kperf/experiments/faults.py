"""A steady producer while the leader of partition 0 is killed and restarted, or paused and resumed, per acks
(kperf's own): what is lost, what clients saw, how long they took to recover."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.fault_recovery import RECOVERED_WINDOWS
from kperf.load import ISR_TIMEOUT_S, Fault
from kperf.results import FAILED_SENDS
from kperf.study.experiment import (
    ACKS,
    Experiment,
    Panel,
    Param,
    Point,
    Settings,
    common,
    min_insync,
    paced_records,
    point,
    register,
    workload,
)
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def faults(s: Settings) -> list[Fault]:
    """The grid's faults, each from ``fault_at_s``: the kill for ``kill_s``, a pause per length, and for ``for_s``
    the link's added latency and bandwidth cap, the packets lost and the user's commands."""
    at, kinds = s["fault_at_s"], s["fault_kinds"]
    until = at + s["for_s"]
    return ([Fault(at, at + s["kill_s"], "kill")] if "kill" in kinds else []) + (
        [Fault(at, at + pause, "pause") for pause in s["pause_s_values"]] if "pause" in kinds else []) + (
        [Fault(at, until, "latency", latency_ms=s["latency_ms"])] if "latency" in kinds else []) + (
        [Fault(at, until, "bandwidth", bandwidth_kib_s=s["bandwidth_kib_s"])] if "bandwidth" in kinds else []) + (
        [Fault(at, until, "loss", loss_pct=s["loss_pct"])] if "loss" in kinds else []) + (
        [Fault(at, until, "command", argv(s["command_start"]), argv(s["command_stop"]))] if "command" in kinds else [])


def argv(words: list[str]) -> tuple[str, ...]:
    """A command given as its words, or as one string split as a shell would."""
    return tuple(shlex.split(words[0])) if len(words) == 1 else tuple(words)


def grid(s: Settings) -> list[Point]:
    return [
        point(
            f"{fault.label}, acks={acks}",
            workload(
                s, {"acks": acks, **({"enable.idempotence": True} if acks == "all" else {})},
                records=paced_records(s, s["rate"]), rate=s["rate"], fault=fault,
                topic_config=min_insync(s, s["replication_factor"]),
            ),
            duration_s=s["duration_s"], fault=fault.kind, fault_s=fault.end_s - fault.at_s,
        )
        for fault in faults(s)
        for acks in s["acks_values"]
    ]


def rules(s: Settings) -> None:
    """A fault point needs the python client (it reads every record back), a replica to fail over to, and each
    fault inside the load."""
    if "java" in s.get("clients", ()):
        raise KperfError("parameter 'clients' of experiment 'faults': it judges loss by reading every record "
                         "back with its sequence number, so it runs the python client only")
    if s.get("replication_factor", 2) < 2:
        raise KperfError("parameter 'faults.replication_factor' must be at least 2: a killed broker needs a replica")
    if all(s.get(k) is not None for k in ("fault_at_s", "kill_s", "pause_s_values", "for_s", "latency_ms",
                                          "bandwidth_kib_s", "loss_pct", "command_start", "command_stop", "fault_kinds",
                                          "duration_s")):
        for fault in faults(s):
            try:
                fault.check(s["duration_s"])
            except KperfError as exc:
                raise KperfError(f"parameters of experiment 'faults' ({fault.label} from 'fault_at_s'): {exc}") from None


OUTAGE = ("no_ack_s", "rate_before", "rate_min_from_fault", "p99_before_ms", "p99_during_fault_ms",
          "p99_after_fault_ms", "recovery_s", "isr_shrink_s", "isr_recovery_s", "fault_controller")  # what the fault
# cost a run (kperf.drivers.faults.outage)
SPLIT = ("p99_during_fault_led_ms", "p99_during_fault_others_ms", "rate_during_fault_led", "rate_during_fault_others")
# the partitions the broker hit led against the others, during the fault (records before 2026-11-27 lack them)
SEEN = ("lag_calm_records", "lag_peak_records", "lag_recovery_s", "full_recovery_s", "under_replicated_peak",
        "under_replicated_cleared_s", "leader_changes")  # what a group reading along and the brokers saw (since
# 2026-11-27; the brokers' figures need their metrics)


def analyze(results: pd.DataFrame) -> Finding:
    """Per fault and acks: acknowledged records lost over every repeat, and the median cost of the fault."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    rows = older(results[results["role"] == "producer"])
    keys = ["param.fault", "param.fault_s", "param.acks"]
    return findings.tabled("faults", [
        (cost(f"{kind} {length:g} s", acks, mine), mine.reindex(columns=[
            *keys, "repeat", "records", "acked_lost", "duplicated", FAILED_SENDS, *OUTAGE, *SEEN, *SPLIT]))
        for (kind, length, acks), mine in rows.groupby(keys, sort=False)
    ])


def older(rows: pd.DataFrame) -> pd.DataFrame:
    """Records of the kill-only experiment (before 2026-11-27: ``param.kill_at_s``, ``param.restart_at_s``) read
    as kill faults of their length; every figure they lack is NaN."""
    rows = rows.reindex(columns=rows.columns.union(["param.fault", "param.fault_s", *OUTAGE, *SEEN], sort=False))
    if "param.kill_at_s" in rows:
        old = rows["param.fault"].isna()
        length = rows["param.restart_at_s"] - rows["param.kill_at_s"]
        rows = rows.assign(**{"param.fault": rows["param.fault"].astype(object).where(~old, "kill"),
                              "param.fault_s": rows["param.fault_s"].where(~old, length)})
    return rows


def cost(fault: str, acks: str, mine: pd.DataFrame) -> str:
    """What ``fault`` cost one acks setting, in words: the records lost over every run, the fault's medians."""
    medians = mine[list(OUTAGE)].median()
    lost, acked, runs = int(mine["acked_lost"].sum()), int(mine["records"].sum()), len(mine)
    noticed = (f"Kafka dropped the broker from an ISR {medians['isr_shrink_s']:.1f} s in"
               if mine["isr_shrink_s"].notna().all() else "in some runs no ISR dropped the broker before the fault ended")
    full = (f"every ISR was full {medians['isr_recovery_s']:.1f} s after the fault ended"
            if mine["isr_recovery_s"].notna().all() else f"in some runs an ISR was still not full {ISR_TIMEOUT_S:.0f} s "
            "after the fault ended")
    calm = (f"the producer was back at its calm latency {medians['recovery_s']:.1f} s after the fault ended "
            f"({RECOVERED_WINDOWS} windows in a row)" if mine["recovery_s"].notna().all() else
            "in some runs the producer was not back at its calm latency by the end of the load")
    controller = mine["fault_controller"].dropna()
    hit = (f"; the broker hit was the active controller in {int(controller.sum())} of {len(controller)} run(s)"
           if len(controller) else "")
    return (
        f"{fault}, acks={acks}: "
        + (f"lost no acknowledged record in {runs} of {runs} run(s) ({acked:,} acknowledged), " if lost == 0 else
           f"lost {lost:,} of {acked:,} acknowledged records, in {int((mine['acked_lost'] > 0).sum())} of {runs} run(s), ")
        + f"{int(mine['duplicated'].sum()):,} duplicate(s), {int(mine[FAILED_SENDS].sum()):,} failed send(s). "
        f"Median over the runs: a partition went {medians['no_ack_s']:.1f} s without an acknowledgement, "
        f"acknowledgements fell from {medians['rate_before']:,.0f} to {medians['rate_min_from_fault']:,.0f} per "
        f"second, the intended-time p99 was {medians['p99_before_ms']:,.0f} ms before the fault, "
        f"{medians['p99_during_fault_ms']:,.0f} ms during it and {medians['p99_after_fault_ms']:,.0f} ms after it; "
        f"{calm}; {noticed}, and {full}{hit}.{seen(mine)}"
    )


def seen(mine: pd.DataFrame) -> str:
    """What a group reading along and the brokers saw, medians over the runs (empty where no run recorded it)."""
    medians, text = mine[list(SEEN)].median(), ""
    if mine["lag_peak_records"].notna().all():
        text += (f" A group reading along: its lag peaked at {medians['lag_peak_records']:,.0f} records (calm: "
                 f"{medians['lag_calm_records']:,.0f}), " + (
                     f"back at its calm level {medians['lag_recovery_s']:.1f} s after the fault ended"
                     if mine["lag_recovery_s"].notna().all() else "in some runs not back at its calm level while the "
                     "producer sent") + (f"; producer and group both back {medians['full_recovery_s']:.1f} s after it."
                                         if mine["full_recovery_s"].notna().all() else "."))
    if mine["under_replicated_peak"].notna().all():
        text += (f" The brokers: up to {medians['under_replicated_peak']:,.0f} partitions under-replicated, "
                 + (f"none {medians['under_replicated_cleared_s']:.1f} s after the fault ended"
                    if mine["under_replicated_cleared_s"].notna().all() else "in some runs some still while measured")
                 + f"; {medians['leader_changes']:,.0f} leaderships moved.")
    return text


register(Experiment(
    name="faults",
    title="A broker killed, or paused, under load",
    question="Which acks setting loses no acknowledged record when a broker dies or stalls, and how long do producers suffer?",
    measure=("acked_lost", "lowest"),
    # Answered by the pause: a paused leader (a zombie until fenced) is the fault that tells acks settings apart.
    answer_where=(("param.fault", "pause"),),
    order=90,
    params={
        **common("record_size", "partitions", "replication_factor", "batch_size", "linger_ms"),
        "acks_values": Param(str, "producer acks grid (all: with an idempotent producer)", many=True, choices=ACKS),
        "min_insync_replicas": Param(int, "topic min.insync.replicas (capped at the replication factor)", minimum=1),
        "rate": Param(float, "steady producer rate (records/s)", minimum=1),
        "duration_s": Param(float, "seconds of load per point", minimum=1),
        "fault_kinds": Param(str, "faults on the leader of partition 0: kill (SIGKILL, then restarted), pause "
                             "(SIGSTOP, then SIGCONT), latency and bandwidth (its link slowed: a local cluster "
                             "started with 'kperf cluster up --links'), loss (packets to and from its port dropped "
                             "by the kernel: root, 'make lossy') and command (the user's own commands, any cluster)",
                             many=True, choices=("kill", "pause", "latency", "bandwidth", "loss", "command")),
        "fault_at_s": Param(float, "seconds into the load when each fault starts", minimum=0),
        "kill_s": Param(float, "seconds a killed broker stays down before its restart", minimum=0.1),
        "pause_s_values": Param(float, "pause lengths grid (s)", many=True, minimum=0.1),
        "for_s": Param(float, "seconds a link stays slowed, or from a command fault's start to its stop", minimum=0.1),
        "latency_ms": Param(float, "latency added to each answer of the broker on its link (ms)", minimum=0.1),
        "bandwidth_kib_s": Param(float, "cap on what the broker is sent over its link (KiB/s)", minimum=1),
        "loss_pct": Param(float, "share of the packets to and from the broker's port dropped (%, 0.1 to 99.9)",
                          minimum=0.1),
        "command_start": Param(str, "a command fault's start command: one string split as a shell would, or its "
                               "words", many=True, empty=True),
        "command_stop": Param(str, "a command fault's stop command (run even when the start failed)", many=True,
                              empty=True),
    },
    # Its answer is what the outage cost, not a rate (the rate is the cap): no extra repeats for precision.
    profiles={
        # Kafka fences a dead or silent broker after broker.session.timeout.ms (9 s), and a follower that stops
        # fetching leaves the ISR after replica.lag.time.max.ms (30 s): kills outlast the first, pauses straddle both.
        # smoke paces 250 records/s: three local brokers on a 2-core host took seconds to acknowledge 1,000/s with
        # acks=all (2026-11-29), and its idempotent producer then polled without waiting (docs/measure.md).
        "smoke": {"acks_values": ["all"], "fault_kinds": ["kill", "pause"],
                  "min_insync_replicas": 2, "partitions": 3, "replication_factor": 3, "rate": 250,
                  "duration_s": 14.0, "fault_at_s": 3.0, "kill_s": 10.0, "pause_s_values": [2.0], "for_s": 4.0,
                  "latency_ms": 500.0, "bandwidth_kib_s": 256.0, "loss_pct": 5.0, "command_start": [], "command_stop": []},
        "quick": {"extra_repeats": 0, "acks_values": ["all", "1"], "fault_kinds": ["kill", "pause"],
                  "min_insync_replicas": 2, "partitions": 3, "replication_factor": 3, "rate": 2_000,
                  "duration_s": 30.0, "fault_at_s": 8.0, "kill_s": 12.0, "pause_s_values": [12.0], "for_s": 12.0,
                  "latency_ms": 200.0, "bandwidth_kib_s": 512.0, "loss_pct": 2.0, "command_start": [], "command_stop": []},
        # No published counterpart: kperf's own. rf 3, min.insync.replicas 2, one broker killed for a minute, or
        # paused for 5 s (no broker fenced), 15 s (fenced) and 40 s (also out of the ISR).
        "seed": {"clients": ["python"], "extra_repeats": 0, "acks_values": ["all", "1"], "fault_kinds": ["kill", "pause"],
                 "min_insync_replicas": 2, "partitions": 6, "replication_factor": 3, "rate": 10_000, "duration_s": 120.0,
                 "fault_at_s": 30.0, "kill_s": 60.0, "pause_s_values": [5.0, 15.0, 40.0], "for_s": 60.0,
                 "latency_ms": 100.0, "bandwidth_kib_s": 1024.0, "loss_pct": 1.0, "command_start": [], "command_stop": []},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel("producer", "param.acks", y, series=("param.fault", "param.fault_s"), categorical=True)
        for y in ("acked_lost", "no_ack_s", "p99_during_fault_ms", "recovery_s")
    ),
    rules=rules,
))
