"""The verdict, from what ``kperf capacity`` found (``capacity.json``): one table and one sentence a manager can read.

Pure code over the found dict (each SLO re-read as a :class:`~kperf.capacity.slo.SloValue`), so the command's
printout and the capacity notebook say the same. :func:`outcome` is the verdict a pipeline gates on (carried, not
carried or undecided, with why), and :func:`exit_code` the command's exit for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from kperf.capacity.slo import SloValue
from kperf.exits import Exit
from kperf.limits import LOAD_GENERATOR

CARRIED, NOT_CARRIED, UNDECIDED = "carried", "not carried", "undecided"
EXITS = {CARRIED: Exit.OK, NOT_CARRIED: Exit.WORSE, UNDECIDED: Exit.UNDECIDED}


def _slo(found: Mapping[str, Any]) -> SloValue:
    """An SLO as ``capacity.json`` holds it (a field it lacks, as an older run's: its default)."""
    return SloValue(**{f.name: found.get(f.name, f.default) for f in fields(SloValue)})


def _label(phase: str, value: SloValue) -> str:
    return f"{phase}: {value.name}" + (f" ({value.topic})" if value.topic else "")


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _interval(headroom: Mapping[str, Any], show: Callable[[float], str], unknown: str, below: str, at_least: str,
              between: str) -> str:
    """The search's interval in words: ``unknown`` with neither end confirmed, else ``below``, ``at_least`` or
    ``between`` with its ends ({low}, {high}) shown by ``show``."""
    low, high = headroom.get("low"), headroom.get("high")
    if high is None:
        return unknown if low is None else at_least.format(low=show(low))
    return below.format(high=show(high)) if low is None else between.format(low=show(low), high=show(high))


def limit_text(headroom: Mapping[str, Any]) -> str:
    """The sustainable limit as an interval of confirmed rates, e.g. ``between 40,000 and 56,569 records/s``."""
    return _interval(headroom, _rate, "not found: no rate was confirmed either way",
                     "below {high} records/s (no rate the search tried was confirmed to hold)",
                     "at least {low} records/s (no rate up to the search's ceiling was confirmed to fail)",
                     "between {low} and {high} records/s")


def headroom_text(headroom: Mapping[str, Any]) -> str:
    """Limit / target as an interval (``x1.40 to x2.00``, ``at least x4.00``, ``below x0.50``)."""
    return _interval(headroom, lambda rate: f"{rate / headroom['target']:.2f}", "unknown", "below x{high}",
                     "at least x{low}", "x{low} to x{high}")


def sentence(found: Mapping[str, Any]) -> str:
    """One sentence: does the cluster carry the load, with how much room, and does it recover from a backlog."""
    workload = found["workload"]
    sustain = found["sustain"]
    failed = [s["name"] for s in sustain if not s["met"]]
    target = f"{workload['target_rate']:,.0f} records/s"
    if failed:
        text = f"No: at its target of {target} this cluster missed {', '.join(failed)}"
    else:
        text = f"Yes: this cluster carried {workload['name']} at its target of {target} with every SLO met"
    headroom = found.get("headroom")
    if headroom is not None:
        low, high = headroom.get("low"), headroom.get("high")
        if low is not None and low >= headroom["target"]:
            text += f", and every SLO still held at {_rate(low)} records/s (headroom {headroom_text(headroom)})"
        elif high is not None and high <= headroom["target"]:
            text += (f"; it missed an SLO at {_rate(high)} records/s and no rate the search tried was confirmed to meet "
                     "every SLO" if low is None else
                     f"; every SLO held at {_rate(low)} records/s but not at {_rate(high)} (headroom {headroom_text(headroom)})")
        if headroom.get("failed"):
            text += f", {' and '.join(headroom['failed'])} failing first"
    catch_up = found.get("catch_up")
    if catch_up is not None:
        backlog = f"a backlog of {catch_up['backlog_records']:,} records"
        text += (f"; its consumers caught up with {backlog} in {catch_up['seconds']:,.1f} s" if catch_up["caught_up"] else
                 f"; its consumers did not catch up with {backlog} within the {catch_up['timeout_s']:g} s time-out")
    for fault in found.get("faults", ()):
        lost = fault["lost"]
        text += (f"; with {_hit(fault)} it lost {'none' if lost == 0 else f'{lost:,.0f}'} of the {fault['acked']:,} "
                 f"acknowledged records, its producers waiting at most {fault['no_ack_s']:.1f} s for an acknowledgement")
    text += _disturbed(found.get("trials", ()))
    warm_up = found.get("warm_up")
    if warm_up and warm_up["settled"] is False:  # recorded since 2026-11-28 (None: too few rounds to judge)
        text += f"; {warm_up['sentence']}"
    return text + "."


def _disturbed(trials: Sequence[Mapping[str, Any]]) -> str:
    """The clause for attempts other load on the host disturbed (:mod:`kperf.disturbance`): those discarded and
    measured again, and the trials that count all the same (a last attempt, a catch-up); "" when there were none."""
    discarded = sum(1 for t in trials if not t.get("counted", True))
    counted = sum(1 for t in trials if t.get("disturbed") and t.get("counted", True))
    text = (f"; {discarded} attempt(s) that other load on this host disturbed were discarded and measured again"
            if discarded else "")
    if counted:
        text += f"; {counted} trial(s) count though other load on this host disturbed them: read those numbers with care"
    return text


def missed(found: Mapping[str, Any]) -> list[str]:
    """Every SLO a phase missed, named with its phase: the sustain trial's, a catch-up that timed out, each fault's."""
    names = [f"sustain: {s['name']}" for s in found["sustain"] if not s["met"]]
    catch_up = found.get("catch_up")
    if catch_up is not None and not catch_up["caught_up"]:
        names.append(f"catch-up within {catch_up['timeout_s']:g} s")
    names += [f"{_hit(fault)}: {s['name']}" for fault in found.get("faults", ()) for s in fault["slos"] if not s["met"]]
    return names


def outcome(found: Mapping[str, Any]) -> tuple[str, str]:
    """Does the cluster carry the workload: CARRIED, NOT_CARRIED or UNDECIDED, and why in words.

    Undecided when the search found the limit only from above (no rate it tried, down to its floor, met every SLO:
    something other than the rate failed them), when the limit it found is the load generator's and the answer
    would otherwise be no (the cluster was not what was measured), or when the search's trials failed at or below
    the target although every phase met its SLOs there (the evidence disagrees). Otherwise not carried when any
    phase missed an SLO (:func:`missed`), else carried."""
    headroom = found.get("headroom") or {}
    low, high, target = headroom.get("low"), headroom.get("high"), headroom.get("target")
    failed = missed(found)
    if high is not None and low is None:
        return UNDECIDED, (f"the limit was found only from above: an SLO failed at {_rate(high)} records/s and no "
                           "rate the search tried was confirmed to meet every SLO")
    search_failed = high is not None and target is not None and high <= target
    held = headroom.get("limited_by")
    if held and held[0] == LOAD_GENERATOR and (failed or search_failed):
        return UNDECIDED, f"the limit found is the load generator's, not the cluster's ({held[1]})"
    if failed:
        return NOT_CARRIED, f"missed {', '.join(failed)}"
    if search_failed:
        return UNDECIDED, (f"every phase met its SLOs at the target, but the search's trials failed at "
                           f"{_rate(high)} records/s, at or below it")
    return CARRIED, "every SLO met"


def exit_code(found: Mapping[str, Any]) -> Exit:
    """``kperf capacity``'s exit for its verdict (:func:`outcome`): OK carried, WORSE not carried, UNDECIDED."""
    return EXITS[outcome(found)[0]]


def table(found: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The verdict table's rows: (what, measured, verdict)."""
    rows = [("workload", found["workload"]["describe"], "")]
    for s in found["sustain"]:
        value = _slo(s)
        rows.append((_label("sustain", value), value.text(), "met" if value.met else "MISSED"))
    headroom = found.get("headroom")
    if headroom is not None:
        rows.append(("sustainable limit", limit_text(headroom), f"{headroom['trials']} trials; {headroom['note']}"))
        rows.append(("headroom (limit / target)", headroom_text(headroom), ""))
        if headroom.get("failed"):
            rows.append(("failed at the lowest failing rate", ", ".join(headroom["failed"]), ""))
        if headroom.get("limited_by"):
            what, evidence = headroom["limited_by"]
            rows.append(("what limited it", what, evidence))
    catch_up = found.get("catch_up")
    if catch_up is not None:
        seconds = catch_up["seconds"]
        rows.append(("catch-up", catch_up["sentence"],
                     "caught up" if catch_up["caught_up"] else f"TIMED OUT at {catch_up['timeout_s']:g} s"))
        if not math.isnan(seconds):
            rows.append(("catch-up time", f"{seconds:,.1f} s (time-out {catch_up['timeout_s']:g} s)", ""))
    for fault in found.get("faults", ()):
        on = f"on topic {fault['stream']}: " if fault.get("stream") else ""  # with several, the first topic's
        hit = _hit(fault)
        rows.append((hit, f"{on}from {fault['fault_at_s']:.1f} s to {fault['fault_end_s']:.1f} s; longest wait for an "
                     "ack " f"{fault['no_ack_s']:.1f} s; every ISR full again "
                     + ("never (within the wait)" if math.isnan(fault["isr_recovery_s"]) else
                        f"{fault['isr_recovery_s']:.1f} s after it")
                     + _back_to_calm(fault["recovery_s"]) + _seen_by_others(fault), ""))
        for s in fault["slos"]:
            value = _slo(s)
            rows.append((_label(hit, value), value.text(), "met" if value.met else "MISSED"))
    kind, why = outcome(found)
    rows.append(("verdict", why, f"{kind.upper()} (exit {exit_code(found):d})"))
    return rows


def show(found: Mapping[str, Any]) -> str:
    """The table and the sentence as plain text for the terminal."""
    rows = table(found)
    width = max(len(r[0]) for r in rows)
    lines = [f"{what:<{width}}  {measured}" + (f"  [{verdict}]" if verdict else "") for what, measured, verdict in rows]
    return "\n".join([*lines, "", sentence(found)])


def _back_to_calm(seconds: float) -> str:
    """When the producers were back at their calm latency (kperf.fault_recovery), in words."""
    return ("; producers not back at their calm latency by the end" if math.isnan(seconds) else
            f"; producers back at their calm latency {seconds:.1f} s after it")


def _seen_by_others(fault: Mapping[str, Any]) -> str:
    """What a group reading along and the brokers saw of the fault, in words (runs before 2026-11-27: nothing)."""
    lag, back = fault.get("lag_peak_records", math.nan), fault.get("lag_recovery_s", math.nan)
    text = "" if math.isnan(lag) else f"; a group's lag peaked at {lag:,.0f} records, " + (
        "not back at its calm level by the end" if math.isnan(back) else f"back at its calm level {back:.1f} s after it")
    under, moved = fault.get("under_replicated_peak", math.nan), fault.get("leader_changes", math.nan)
    if not math.isnan(under):
        text += f"; the brokers: up to {under:,.0f} partitions under-replicated, {moved:,.0f} leaderships moved"
    return text


HIT = {"kill": "a broker killed for {:g} s", "pause": "a broker paused for {:g} s",
       "latency": "a broker's link slowed for {:g} s", "bandwidth": "a broker's link capped for {:g} s",
       "loss": "a broker's packets dropped for {:g} s", "command": "the fault command's {:g} s"}


def _hit(fault: Mapping[str, Any]) -> str:
    """A fault phase in a few words: ``a broker paused for 10 s``."""
    return HIT[fault["kind"]].format(fault["for_s"])
