"""A steady producer while the leader of partition 0 is killed and restarted, per acks (kperf's own): what is lost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.errors import KperfError
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


def grid(s: Settings) -> list[Point]:
    fault = Fault(s["kill_at_s"], s["restart_at_s"])
    return [
        point(
            f"acks={acks}",
            workload(
                s, {"acks": acks, **({"enable.idempotence": True} if acks == "all" else {})},
                records=paced_records(s, s["rate"]), rate=s["rate"], fault=fault,
                topic_config=min_insync(s, s["replication_factor"]),
            ),
            duration_s=s["duration_s"], kill_at_s=fault.kill_at_s, restart_at_s=fault.restart_at_s,
        )
        for acks in s["acks_values"]
    ]


def rules(s: Settings) -> None:
    """A fault point needs the python client (it reads every record back), a replica to fail over to,
    and the kill and restart inside the load, in that order."""
    if "java" in s.get("clients", ()):
        raise KperfError("parameter 'clients' of experiment 'faults': it judges loss by reading every record "
                         "back with its sequence number, so it runs the python client only")
    if s.get("replication_factor", 2) < 2:
        raise KperfError("parameter 'faults.replication_factor' must be at least 2: a killed broker needs a replica")
    kill, restart, duration = (s.get(k) for k in ("kill_at_s", "restart_at_s", "duration_s"))
    if kill is not None and restart is not None and duration is not None and not kill < restart < duration:
        raise KperfError(f"parameters 'faults.kill_at_s' < 'faults.restart_at_s' < 'faults.duration_s' must hold, "
                         f"got {kill:g}, {restart:g} and {duration:g}")


OUTAGE = ("no_ack_s", "rate_before", "rate_min_after_kill", "p99_before_ms", "p99_after_kill_ms", "isr_shrink_s",
          "isr_recovery_s")  # what the outage cost a run (kperf.drivers.faults.outage)


def analyze(results: pd.DataFrame) -> Finding:
    """Per acks: acknowledged records lost over every repeat, and the median cost of the outage."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    rows = results[results["role"] == "producer"]
    return findings.tabled("faults", [
        (cost(acks, mine), mine[["param.acks", "repeat", "records", "acked_lost", "duplicated", FAILED_SENDS, *OUTAGE]])
        for acks, mine in rows.groupby("param.acks", sort=False)
    ])


def cost(acks: str, mine: pd.DataFrame) -> str:
    """What the fault cost one acks setting, in words: the records lost over every run, the outage's medians."""
    medians = mine[list(OUTAGE)].median()
    lost, acked, runs = int(mine["acked_lost"].sum()), int(mine["records"].sum()), len(mine)
    noticed = (f"Kafka noticed the broker gone after {medians['isr_shrink_s']:.1f} s"
               if mine["isr_shrink_s"].notna().all() else "in some runs Kafka had not noticed the broker gone "
               "by its restart")
    recovered = (f"{medians['isr_recovery_s']:.1f} s after its restart every ISR was full again"
                 if mine["isr_recovery_s"].notna().all() else "in some runs an ISR was still not full "
                 f"{ISR_TIMEOUT_S:.0f} s after the restart")
    return (
        f"acks={acks}: "
        + (f"lost no acknowledged record in {runs} of {runs} run(s) ({acked:,} acknowledged), " if lost == 0 else
           f"lost {lost:,} of {acked:,} acknowledged records, in {int((mine['acked_lost'] > 0).sum())} of {runs} run(s), ")
        + f"{int(mine['duplicated'].sum()):,} duplicate(s), {int(mine[FAILED_SENDS].sum()):,} failed send(s). "
        f"Median over the runs: a partition went {medians['no_ack_s']:.1f} s without an acknowledgement, "
        f"acknowledgements fell from {medians['rate_before']:,.0f} to {medians['rate_min_after_kill']:,.0f} per "
        f"second, p99 latency rose from {medians['p99_before_ms']:,.0f} to {medians['p99_after_kill_ms']:,.0f} ms; "
        f"{noticed}, and {recovered}."
    )


register(Experiment(
    name="faults",
    title="A broker killed and restarted",
    question="Which acks setting loses no acknowledged record when a broker dies?",
    measure=("acked_lost", "lowest"),
    order=90,
    params={
        **common("record_size", "partitions", "replication_factor", "batch_size", "linger_ms"),
        "acks_values": Param(str, "producer acks grid (all: with an idempotent producer)", many=True, choices=ACKS),
        "min_insync_replicas": Param(int, "topic min.insync.replicas (capped at the replication factor)", minimum=1),
        "rate": Param(float, "steady producer rate (records/s)", minimum=1),
        "duration_s": Param(float, "seconds of load per point", minimum=1),
        "kill_at_s": Param(float, "seconds into the load when the leader of partition 0 is killed (SIGKILL)", minimum=0),
        "restart_at_s": Param(float, "seconds into the load when that broker is started again", minimum=0),
    },
    # Its answer is what the outage cost, not a rate (the rate is the cap): no extra repeats for precision.
    profiles={
        # Kafka fences a dead broker after broker.session.timeout.ms (9 s): restart after that.
        "smoke": {"clients": ["python"], "acks_values": ["all", "1"], "min_insync_replicas": 2, "partitions": 3,
                  "replication_factor": 3, "rate": 1_000, "duration_s": 18.0, "kill_at_s": 4.0, "restart_at_s": 15.0},
        "quick": {"extra_repeats": 0, "acks_values": ["all", "1"], "min_insync_replicas": 2, "partitions": 3,
                  "replication_factor": 3, "rate": 2_000, "duration_s": 30.0, "kill_at_s": 8.0, "restart_at_s": 20.0},
        # No published counterpart: kperf's own. rf 3, min.insync.replicas 2, one broker killed for a minute.
        "seed": {"clients": ["python"], "extra_repeats": 0, "acks_values": ["all", "1"], "min_insync_replicas": 2, "partitions": 6,
                 "replication_factor": 3, "rate": 10_000, "duration_s": 120.0, "kill_at_s": 30.0, "restart_at_s": 90.0},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel("producer", "param.acks", y, categorical=True)
        for y in ("acked_lost", "no_ack_s", "isr_recovery_s", "p99_after_kill_ms")
    ),
    rules=rules,
))
