"""A fault's own checks (kperf.load.Fault), the kinds the drivers know, and the active controller's line parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kperf.drivers import fault_kinds, packet_loss
from kperf.errors import KperfError
from kperf.kafka import quorum
from kperf.load import FAULT_KINDS, Fault


def test_every_fault_kind_has_an_injector() -> None:
    assert set(fault_kinds.KINDS) == set(FAULT_KINDS)


@pytest.mark.parametrize(("fault", "duration", "message"), [
    (Fault(2, 4, "unplug"), None, r"^fault kind 'unplug' is not one of kill, pause, latency, bandwidth, loss, command$"),
    (Fault(-1, 4, "pause"), None, r"^a fault must start at or after 0 s and end after it starts, got -1 s to 4 s$"),
    (Fault(4, 4, "kill"), None, r"^a fault must start at or after 0 s and end after it starts, got 4 s to 4 s$"),
    (Fault(2, 12, "pause"), 10.0, r"^a fault ending at 12 s does not end inside the 10 s of load$"),
    (Fault(2, 4, "command", ("true",)), None, r"^a command fault needs both its start and its stop command$"),
    (Fault(2, 4, "pause", (), ("true",)), None, r"^a pause fault takes no commands: only a command fault runs the user's$"),
    (Fault(2, 4, "latency"), None, r"^a latency fault needs a positive, finite latency_ms, got 0$"),
    (Fault(2, 4, "bandwidth", bandwidth_kib_s=-5), None, r"^a bandwidth fault needs a positive, finite bandwidth_kib_s, got -5$"),
    (Fault(2, 4, "kill", latency_ms=100), None, r"^a kill fault takes no latency_ms: only a latency fault does$"),
    (Fault(2, 4, "loss"), None, r"^a loss fault needs a positive, finite loss_pct, got 0$"),
    (Fault(2, 4, "loss", loss_pct=0.05), None, r"^a loss fault drops 0.1 to 99.9 % of the packets, got 0.05$"),
    (Fault(2, 4, "loss", loss_pct=99.95), None, r"^a loss fault drops 0.1 to 99.9 % of the packets, got 99.95$"),
    (Fault(2, 4, "pause", loss_pct=5), None, r"^a pause fault takes no loss_pct: only a loss fault does$"),
])
def test_a_fault_that_cannot_run_is_refused_in_one_line(fault: Fault, duration: float | None, message: str) -> None:
    with pytest.raises(KperfError, match=message):
        fault.check(duration)


def test_a_fault_that_can_run_passes_and_says_what_it_is() -> None:
    Fault(0, 2, "command", ("true",), ("true",)).check(3.0)
    assert Fault(4, 6.5, "pause").label == "pause 2.5s"
    assert Fault(4, 8, "latency", latency_ms=500).label == "latency 500ms 4s"
    assert Fault(4, 8, "bandwidth", bandwidth_kib_s=256).label == "bandwidth 256KiB/s 4s"
    assert Fault(4, 8, "loss", loss_pct=2.5).label == "loss 2.5% 4s"


def test_a_loss_fault_without_root_is_refused_before_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KPERF_CACHE", str(tmp_path))
    with pytest.raises(KperfError, match=r"^a loss fault needs kperf's helper at .*lossy: run 'make lossy' \(it needs Go\)$"):
        packet_loss.require_usable(euid=0)
    (tmp_path / "lossy").mkdir()
    (tmp_path / "lossy" / "lossy").write_text("")
    with pytest.raises(KperfError, match=r"^a loss fault changes the kernel's packet filter, which needs root: "):
        packet_loss.require_usable(euid=1000)
    packet_loss.require_usable(euid=0)


def test_a_command_not_on_this_host_is_refused_before_load() -> None:
    with pytest.raises(KperfError, match=r"^the fault's start command `no-such-tool -x`: no-such-tool is not a program on this host$"):
        fault_kinds.require_runnable(Fault(0, 2, "command", ("no-such-tool", "-x"), ("true",)))


def test_the_active_controller_is_the_quorums_leader() -> None:
    status = "ClusterId:              q1\nLeaderId:               2\nLeaderEpoch:            7\nHighWatermark:          90\n"
    assert quorum.leader_id(status) == 2
    with pytest.raises(KperfError, match="printed no LeaderId"):
        quorum.leader_id("ClusterId: q1\n")


def test_records_of_the_kill_only_experiment_still_analyse_as_kills() -> None:
    import pandas as pd

    from kperf.experiments import faults

    old = pd.DataFrame([{"role": "producer", "param.acks": acks, "param.kill_at_s": 8.0, "param.restart_at_s": 20.0,
                         "repeat": 0, "records": 60_000, "acked_lost": lost, "duplicated": 0, "failed_sends": 0,
                         "no_ack_s": 8.5, "rate_before": 2_000, "rate_min_after_kill": 0, "p99_before_ms": 40.0,
                         "p99_after_kill_ms": 900.0, "isr_shrink_s": 8.0, "isr_recovery_s": 25.0}
                        for acks, lost in (("all", 0), ("1", 71))])
    answers = faults.analyze(old).answers
    assert answers[0].startswith("kill 12 s, acks=all: lost no acknowledged record in 1 of 1 run(s)")
    assert answers[1].startswith("kill 12 s, acks=1: lost 71 of 60,000 acknowledged records")


def test_every_fault_kind_is_told_in_the_capacity_verdict() -> None:
    from kperf.capacity import verdict

    assert set(verdict.HIT) == set(FAULT_KINDS)
    assert verdict.HIT["loss"].format(10) == "a broker's packets dropped for 10 s"
