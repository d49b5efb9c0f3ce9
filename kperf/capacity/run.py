"""``kperf capacity``: a workload measured against a cluster, phase by phase, recorded, and its verdict.

* **sustain**: the workload at its target rate with all its consumer groups for its duration;
* **headroom**: :func:`kperf.capacity.search.search` over the rate, each trial the workload for ``trial_s``;
* **catch-up**: a backlog written with no consumer running, then the groups start while the producers keep the
  target rate; caught up when a group's lag is back within one window of target traffic, judged up to the stated
  time-out; the consumers stop ``DRAIN_S`` after it whatever happens.

Every trial runs on a fresh topic (deleted after it), with fresh consumer groups, and is recorded as one unit
of result records (the producer's and each group's, with ``param.phase`` and the SLO values in ``slo.*``) under
``data/capacity/<run id>/results``; the verdict goes to ``capacity.json`` beside them, then the capacity
notebook writes ``capacity.html`` (:mod:`kperf.capacity.measure_file`).
"""

from __future__ import annotations

import json
import math
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from kperf import disturbance, limits
from kperf.capacity import search, sizing_topics, slo, verdict
from kperf.capacity.warm_up import WarmUp
from kperf.capacity.workload import CapacityWorkload, FaultPhase, Group, Stream
from kperf.drivers import fault_kinds, faults, read_process_write
from kperf.drivers.consumer import consume
from kperf.drivers.load_hosts import checks, dispatch
from kperf.drivers.observed import measured_with_resources
from kperf.drivers.producer import produce
from kperf.drivers.progress import PROGRESS_EVERY_S
from kperf.drivers.specs import ConsumerSpec, ProcessorSpec, ProducerSpec
from kperf.kafka import features, groups, security, topics
from kperf.kafka.target import Target
from kperf.load import ISOLATION
from kperf.paths import data_dir
from kperf.results import FAILED_SENDS, Measurement, Result, ResultStore
from kperf.study import environment, runs

EXPERIMENT = "capacity"
VERDICT_FILE = runs.VERDICT_FILE
SUSTAIN, HEADROOM, CATCH_UP, FAULT = "sustain", "headroom", "catch-up", "fault"
GRACE_S = 10.0  # consumers may read this long after the producers stopped (a trial's consumers then stop)
IDLE_S = 3.0  # ... or once nothing arrived for this long (counted from the producers' duration after forming)
DRAIN_S = 3.0  # catch-up: consumers read this long past the time-out, so the last windows are complete
# The producers' clock starts once their groups formed (see loads): their processes spawned, warmed up and the groups
# seen formed, which takes a few seconds more than a consumer's own start. Consumers, whose time runs from their
# group's forming, read this much longer (stopping as soon as they have read every record, so it costs only a trial
# that lost records).
START_S = 10.0
GIVE_UP_S = 10.0  # at least: see give_up_s
DISTURBED_RETRIES = 2  # a trial disturbed by other load on the host is measured again this many times at most
WARMUP_RECORDS = 50  # per producer process, sent and acknowledged before its clock starts: its connections and
# (idempotent) producer id are then set up, which is a new client's cost, not the workload's


def run_dir() -> Path:
    """A new folder for one capacity run, apart from the studies' (``kperf report`` reads those)."""
    folder = data_dir() / "capacity" / f"{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:4]}"
    folder.mkdir(parents=True)
    return folder


class Capacity:
    """One workload against one cluster: its trials, their records, and what they found."""

    def __init__(self, target: Target, workload: CapacityWorkload, folder: Path, source: str = "") -> None:
        self.target, self.workload, self.folder, self.source = target, workload, folder, source
        self.store = ResultStore.of_run(folder)
        self.env = {**environment.collect(target), "capacity_source": source}
        self.rows: dict[tuple[str, float], list[dict[str, Any]]] = {}  # (phase, rate) -> producer rows
        self.trials: list[dict[str, Any]] = []
        self.sinks: dict[str, dict[str, str]] = {}  # within topics(): a source topic's processing groups' sink topics

    # -- one trial ---------------------------------------------------------------------------------------------
    @contextmanager
    def topics(self, streams: Sequence[Stream] | None = None) -> Iterator[list[str]]:
        """A fresh topic of each stream's layout (every stream's by default), and one more of it for each of its
        processing groups to write to (:attr:`sinks`), deleted after the trial; the streams' topics are yielded."""
        def layout(s: Stream, *label: str) -> topics.Layout:
            prefix = "-".join(filter(None, ("capacity", self.folder.name, s.name, *label)))
            return topics.Layout(prefix, s.partitions, s.replication_factor, s.topic_config)

        chosen = streams or self.workload.streams
        sinks = [(i, g.name) for i, s in enumerate(chosen) for g in s.groups if g.processed is not None]
        layouts = [*(layout(s) for s in chosen), *(layout(chosen[i], group) for i, group in sinks)]
        # Primed, all at once: a trial measures the load, not the topics' first writes.
        with topics.temporaries(self.target.bootstrap, layouts, primed=True) as made:
            names, sink_names = made[:len(chosen)], made[len(chosen):]
            self.sinks = {topic: {} for topic in names}
            for (i, group), sink in zip(sinks, sink_names, strict=True):
                self.sinks[names[i]][group] = sink
            try:
                yield names
            finally:
                self.sinks = {}

    def loads(self, names: Sequence[str], rate: float, duration_s: float, grace_s: float,
              before: Sequence[int] | None = None) -> list[Load]:
        """Each stream at its share of ``rate`` for ``duration_s`` on its topic (``names``), its groups reading for up
        to ``duration_s + grace_s`` what its producers are to send and what was written ``before`` their clock
        started (default: their warm-up records)."""
        w = self.workload
        found = []
        for i, (stream, topic) in enumerate(zip(w.streams, names, strict=True)):
            share = rate * w.share(stream)
            expected = slo.planned(share, duration_s, stream.producers)
            written = before[i] if before is not None else WARMUP_RECORDS * stream.producers
            # Read as long as the producers may run after this group formed: until every other group formed too
            # (the producers start then, within the join bound), their start and their duration.
            sinks = self.sinks.get(topic, {})
            # A silence before the producers' time is surely up (a stalled host, a fault) is no sign that they are
            # done: their clock starts once this group formed, so a group stops on one only from ``duration_s`` after
            # its forming (a trial whose producers gave up before their time then ends later, at most that).
            readers = consumer_specs(self.target.bootstrap, w, stream, topic, written + expected,
                                     duration_s + grace_s + START_S + w.join_timeout_s, sinks, duration_s)
            processors = processor_specs(self.target.bootstrap, w, stream, topic, written + expected, sinks, duration_s)
            # The producers' clock starts once the groups formed: a slow join is no latency or lag of the workload.
            producer = replace(self.watched(producer_spec(self.target.bootstrap, w, stream, topic, share,
                                                          duration_s=duration_s)),
                               after_groups=(*((g.group, g.consumers) for g in readers if g.share is None),
                                             *((p.group, 1) for p in processors)),
                               join_timeout_s=w.join_timeout_s)
            found.append(Load(stream, share, producer, readers, expected, written, processors))
        return found

    def watched(self, spec: ProducerSpec) -> ProducerSpec:
        """``spec`` showing its progress on a long phase, and on kperf's local cluster failing once the brokers'
        disk is nearly full (kperf.drivers.disk_room)."""
        return replace(spec, progress_s=PROGRESS_EVERY_S,
                       disk_folder=str(self.target.local.directory) if self.target.local else "")

    def run(self, names: Sequence[str], loads: Sequence[Load]) -> list[slo.StreamRun]:
        """``loads`` all at once on the topics ``names``, measured with the resources they used; a run per stream."""
        written = [*names, *(sink for name in names for sink in self.sinks.get(name, {}).values())]
        measured = measured_with_resources(self.target, written, self.workload.window_s, lambda: together(loads))
        runs, at = [], 0
        for load in loads:
            groups_at, processors_at = at + 1, at + 1 + len(load.consumers)
            runs.append(load.ran(measured[at], measured[groups_at:processors_at],
                                 measured[processors_at:processors_at + len(load.processors)]))
            at = processors_at + len(load.processors)
        return runs

    def trial(self, phase: str, rate: float, duration_s: float) -> list[slo.SloValue]:
        """The workload at ``rate`` for ``duration_s`` with every group reading: its SLOs, recorded. An attempt that
        other load on the host disturbed (:mod:`kperf.disturbance`) is discarded, kept as a failed unit, and the
        trial measured again, ``DISTURBED_RETRIES`` times at most; the last attempt counts whatever it shows."""
        w = self.workload
        for attempt in range(DISTURBED_RETRIES + 1):
            with self.topics() as names:
                runs = self.run(names, self.loads(names, rate, duration_s, GRACE_S))
            per_stream = [slo.evaluate(w.slos, run) for run in runs]
            values = slo.combine([run.stream.name for run in runs], per_stream)
            if not self.record(phase, rate, runs, per_stream, values, {"duration_s": duration_s},
                               retry=attempt < DISTURBED_RETRIES):
                break
            print(f"kperf: {phase} at {rate:,.0f} records/s: measuring it again ({attempt + 1} of {DISTURBED_RETRIES})",
                  file=sys.stderr)
        return values

    def record(self, phase: str, rate: float, runs: Sequence[slo.StreamRun], per_stream: Sequence[Sequence[slo.SloValue]],
               values: Sequence[slo.SloValue], extra: dict[str, Any], retry: bool = False) -> bool:
        """One unit of records: each stream's producers' (with its SLO values) and each of its groups'; whether it
        was discarded, to be measured again: disturbed by other load on the host (judged where :meth:`judged`) when
        the caller may ``retry``, it is then a failed unit with that reason."""
        w = self.workload
        repeat = sum(1 for t in self.trials if t["phase"] == phase and t["rate"] == rate)
        point = f"{phase} rate={rate:.0f}"
        results, producers = [], []
        for run, own in zip(runs, per_stream, strict=True):
            s = run.stream
            params = {"phase": phase, "workload": w.name, "rate": rate, "target_rate": w.rate, "stream": s.name,
                      "stream_rate": run.rate, "record_size": s.record_size, "partitions": s.partitions,
                      "replication_factor": s.replication_factor, "producers": s.producers, "window_s": w.window_s,
                      **security.redact(s.producer_config), **(s.transactions.params() if s.transactions else {}),
                      **extra}
            measured = run.produced.with_measures({**{f"slo.{v.name}": v.value for v in own}, "slo_margin": slo.worst(own)})
            results.append(Result(self.folder.name, EXPERIMENT, point, repeat, params, measured, self.env))
            producers.append(results[-1].row())
            results += [Result(self.folder.name, EXPERIMENT, point, repeat,
                               {**params, "group": g.name, "consumers": g.consumers, **group_params(g)}, m, self.env)
                        for g, m in zip(s.groups, run.groups, strict=True)]
            processing = [g for g in s.groups if g.processed is not None]
            results += [Result(self.folder.name, EXPERIMENT, point, repeat,
                               {**params, "group": g.name, "consumers": 1, **security.redact(g.settings),
                                **processing_params(g)}, m, self.env)
                        for g, m in zip(processing, run.processors, strict=True)]
        # The streams ran together: their resource figures are the same, the first producer's row has them.
        judged = self.judged(phase)
        foreign = disturbance.foreign_cpu_pct(producers[0]) if judged else math.nan
        disturbed = disturbance.disturbance(producers[0]) if judged else None
        discarded = retry and disturbed is not None
        if discarded:
            results = [replace(r, measurement=replace(r.measurement, failure=disturbed)) for r in results]
        else:  # what the limits at a rate are read from
            self.rows.setdefault((phase, rate), []).extend(producers)
        self.store.append(*results)
        self.trials.append({"phase": phase, "rate": rate, "repeat": repeat, "margin": slo.worst(values),
                            "slos": [v.as_json() for v in values], "counted": not discarded, "disturbed": disturbed,
                            "foreign_cpu_pct": None if math.isnan(foreign) else round(foreign, 1)})
        failed = [v.name for v in values if not v.met]
        print(f"kperf: {phase} at {rate:,.0f} records/s: " + (f"failed {', '.join(failed)}" if failed else "every SLO held")
              + (f"; {disturbed}" if disturbed else ""), file=sys.stderr)
        return discarded

    def judged(self, phase: str) -> bool:
        """Whether a trial of ``phase`` can be told disturbed: not a fault's (a broker it restarts is not sampled),
        nor on a linked cluster (its proxy, kperf's, is sampled as neither broker nor client)."""
        return phase != FAULT and self.target.local is not None and self.target.local.links is None

    # -- the phases --------------------------------------------------------------------------------------------
    def warm_up(self) -> dict[str, Any] | None:
        """Unrecorded load at the target rate with every group, round after round until a round's cost (the brokers'
        CPU per record) stops falling (:mod:`kperf.capacity.warm_up`), so the trials do not measure a cold cluster: a
        freshly started one spends several times more CPU per record over its first minutes of load, and forms its
        first consumer groups slowly. Returns the warm-up as recorded (None without one)."""
        w = self.workload
        if w.warm_up_s <= 0:
            return None
        rounds = WarmUp(w.warm_up_s, w.warm_up_max_s)
        print(f"kperf: warming up the cluster (not recorded): rounds of {w.warm_up_s:g} s at the target rate until their "
              f"cost stops falling (kperf/warmth.py), at most {rounds.bound_s:g} s of load", file=sys.stderr)
        while True:
            with self.topics() as names:
                rounds.add(self.run(names, self.loads(names, w.rate, w.warm_up_s, GRACE_S)))
            print(f"kperf: {rounds.line()}", file=sys.stderr)
            if rounds.done:
                break
        print(f"kperf: {rounds.sentence()}", file=sys.stderr)
        return rounds.as_json()

    def sustain(self) -> list[slo.SloValue]:
        return self.trial(SUSTAIN, self.workload.rate, self.workload.duration_s)

    def headroom(self) -> search.Limit:
        h = self.workload.headroom
        return search.search(lambda rate: slo.worst(self.trial(HEADROOM, rate, h.trial_s)), self.workload.rate,
                             h.max_factor, h.resolution, h.max_trials, h.repeats)

    def catch_up(self) -> dict[str, Any]:
        """Backlog, then the groups against it while the producers keep the target rate, up to the time-out."""
        w = self.workload
        assert w.catch_up is not None
        c = w.catch_up
        with self.topics() as names:
            backlog_specs = [producer_spec(self.target.bootstrap, w, s, topic, w.rate * w.share(s), duration_s=c.backlog_s)
                             if c.backlog_s is not None else
                             producer_spec(self.target.bootstrap, w, s, topic, -1,
                                           records=math.ceil((c.backlog_records or 0) * w.share(s)))
                             for s, topic in zip(w.streams, names, strict=True)]
            backlogs = self.run(names, [Load(s, 0, spec, [], 0) for s, spec in zip(w.streams, backlog_specs, strict=True)])
            # Written before the live producers' clock started: the backlog and both producers' warm-up records.
            before = [b.produced.records + 2 * WARMUP_RECORDS * b.stream.producers for b in backlogs]
            runs = self.run(names, self.loads(names, w.rate, c.timeout_s, DRAIN_S, before))
        found = caught_up(w, sum(b.produced.records for b in backlogs), runs)
        values = [slo.SloValue("catch-up time", c.timeout_s, found["seconds"], "s", note=found["sentence"])]
        self.record(CATCH_UP, w.rate, runs, [values] * len(runs), values,
                    {"backlog_records": found["backlog_records"], "timeout_s": c.timeout_s})
        return found

    def fault(self, phase: FaultPhase) -> dict[str, Any]:
        """The first stream at its target rate with ``phase``'s fault in it (on the leader of its partition 0, or
        the user's commands): what was lost, how long the producers waited, their latency during the fault (against
        the SLO when it is a p99), and how long until the producers were back at their calm latency and a group
        reading along at its calm lag (a lag of committed offsets: the lag SLO's, of records read, is not judged)."""
        w = self.workload
        fault = phase.fault
        stream = w.streams[0]
        rate = w.rate * w.share(stream)
        with self.topics([stream]) as (topic,):
            # No giving up behind schedule: waiting out the fault is what this phase measures.
            spec = replace(self.watched(producer_spec(self.target.bootstrap, w, stream, topic, rate,
                                                      duration_s=phase.duration_s)),
                           producers=1, give_up_behind_s=math.inf)
            (m,) = measured_with_resources(self.target, [topic], w.window_s, lambda: [faults.under_fault(
                spec, fault, stream.replication_factor, self.target.metrics)])
        got = m.measures
        values = [slo.SloValue(slo.LOSS, 0, got["acked_lost"], "records", note="read back after the fault")]
        latency_slo = w.slos.produce_latency
        if latency_slo is not None and latency_slo.stat == "p99":
            values.append(slo.SloValue(f"{slo.PRODUCE_LATENCY} p99 during the fault", latency_slo.max_ms,
                                       got["p99_during_fault_ms"], "ms", note="records meant to be sent during it"))
        run = slo.StreamRun(replace(stream, groups=()), rate, m, [], m.records)
        self.record(FAULT, w.rate, [run], [values], values,
                    {"duration_s": phase.duration_s, "fault": fault.kind, "fault_s": fault.end_s - fault.at_s})
        return {"kind": fault.kind, "for_s": fault.end_s - fault.at_s, "slos": [v.as_json() for v in values], "stream": stream.name,
                "acked": m.records, "lost": got["acked_lost"], FAILED_SENDS: got[FAILED_SENDS], "no_ack_s": got["no_ack_s"],
                **{key: got[key] for key in ("p99_before_ms", "p99_during_fault_ms", "p99_after_fault_ms", "recovery_s",
                                             "lag_peak_records", "lag_recovery_s", "full_recovery_s",
                                             "under_replicated_peak", "leader_changes", "isr_shrink_s",
                                             "isr_recovery_s", "fault_at_s", "fault_end_s", "fault_controller")}}

    # -- all of it ---------------------------------------------------------------------------------------------
    def measure(self) -> dict[str, Any]:
        """Every enabled phase, the verdict written to ``capacity.json``; returns it."""
        w = self.workload
        found: dict[str, Any] = {"workload": {"name": w.name, "source": self.source, "describe": w.describe(),
                                              "target_rate": w.rate, "mean_record_size": w.mean_record_size,
                                              "description": w.description, "settings": asdict(w),
                                              "sizing": [asdict(t) for t in sizing_topics.topics(w)]},
                                 "environment": self.env, "started": datetime.now().isoformat(timespec="seconds")}
        found["warm_up"] = self.warm_up()
        found["sustain"] = [v.as_json() for v in self.sustain()]
        if w.headroom.enabled:
            limit = self.headroom()
            found["headroom"] = self.limit_json(limit)
        if w.catch_up is not None and w.catch_up.enabled:
            found["catch_up"] = self.catch_up()
        if any(phase.enabled for phase in w.faults):  # last: they disturb the cluster
            found["faults"] = [self.fault(phase) for phase in w.faults if phase.enabled]
        found["trials"] = self.trials
        found["sentence"] = verdict.sentence(found)
        runs.write_text(self.folder / VERDICT_FILE, json.dumps(found, indent=2, default=str))
        return found

    def limit_json(self, limit: search.Limit) -> dict[str, Any]:
        """The limit's interval, the decisions behind it, which SLO failed first above it and what held it back."""
        failing = self.rows.get((HEADROOM, limit.high), []) if limit.high is not None else []
        failed = sorted({v["name"] for t in self.trials if t["phase"] == HEADROOM and t["rate"] == limit.high and t["counted"]
                         for v in t["slos"] if not v["met"]})
        worst_first = sorted(failing, key=lambda row: -row.get("slo_margin", 0.0))  # with several topics, the worst's
        held = [limits.limit({k: v for k, v in row.items() if k != "param.rate"}) for row in worst_first]
        return {"low": limit.low, "high": limit.high, "target": self.workload.rate, "note": limit.note,
                "trials": limit.trials, "failed": failed,
                "limited_by": held[0] if held else None,
                "decisions": [{"rate": d.rate, "outcome": d.outcome, "margins": list(d.margins)} for d in limit.decisions]}


@dataclass(frozen=True)
class Load:
    """One stream's part of a phase, to run: its producers and groups, and what they are to send and read."""

    stream: Stream
    rate: float
    producer: ProducerSpec
    consumers: Sequence[ConsumerSpec]  # a group each; a processing group's reads what its processor wrote
    expected: int  # records its producers are to send in the measured time
    before: int = 0  # records written to its topic before their clock starts
    processors: Sequence[ProcessorSpec] = ()  # its processing groups' processors, in their groups' order

    def ran(self, produced: Measurement, groups: Sequence[Measurement],
            processors: Sequence[Measurement] = ()) -> slo.StreamRun:
        return slo.StreamRun(self.stream, self.rate, produced, groups, self.expected, self.before, processors)


def processing_params(g: Group) -> dict[str, Any]:
    """A processing group's transactions as parameters, apart from its stream's producers' (``process_txn_*``)."""
    return {f"process_{k}": v for k, v in g.processed.params().items()} if g.processed is not None else {}


def group_params(g: Group) -> dict[str, Any]:
    """A group's record's parameters: its consumers' settings (a processing group's reader reads read_committed; its
    settings are its processor's), its share group's, its processing."""
    settings = {ISOLATION: "read_committed"} if g.processed is not None else security.redact(g.settings)
    return {**settings, **(g.share.params() if g.share else {}), **processing_params(g)}


def together(loads: Sequence[Load]) -> list[Measurement]:
    """Every stream's producers, consumer groups and processors at once, as one group of runs (the groups and
    processors started first): a stream's producers, then each of its groups, then each of its processors, stream
    after stream."""
    groups = [partial(consume, spec, checked=True) for load in loads for spec in load.consumers]  # checked by check()
    processors = [partial(read_process_write.process, spec) for load in loads for spec in load.processors]
    measured = dispatch.together([*groups, *processors, *(partial(produce, load.producer, checked=True) for load in loads)])
    read, processed = iter(measured[:len(groups)]), iter(measured[len(groups):len(groups) + len(processors)])
    produced = measured[len(groups) + len(processors):]
    return [m for load, p in zip(loads, produced, strict=True)
            for m in (p, *(next(read) for _ in load.consumers), *(next(processed) for _ in load.processors))]


def caught_up(workload: CapacityWorkload, backlog: int, runs: Sequence[slo.StreamRun]) -> dict[str, Any]:
    """When the slowest group of any stream caught up with the ``backlog`` (records, every stream's) and what was
    written meanwhile (its lag within one window of its stream's target traffic) after it formed (its join recorded
    apart, as the consumer's own), judged up to the time-out; its read rate meanwhile; whether every record was read."""
    c = workload.catch_up
    assert c is not None
    times, rates, last_lags, complete = [], [], [], True
    for run in runs:
        threshold = run.rate * workload.window_s
        produced = run.produced
        for group in run.groups:
            if produced.series is None or group.series is None:
                return {"caught_up": False, "seconds": math.nan, "timeout_s": c.timeout_s, "backlog_records": backlog,
                        "sentence": "no time series to judge the catch-up"}
            window_ends, lag, read = slo.lag_per_window(produced.series, group.series, before=run.before)
            since = window_ends - group.series.started_at - group.measures.get("rebalance_ms", 0) / 1000  # from its join
            within = since <= c.timeout_s + 1e-9
            done = (lag <= threshold) & within
            if done.any():
                first = int(done.argmax())
                times.append(float(since[first]))
                rates.append(float(read[first] / since[first]))
            else:
                times.append(math.nan)
                rates.append(group.records / group.seconds if group.seconds > 0 else math.nan)
            last_lags.append(float(lag[within][-1]) if within.any() else math.nan)
            v = group.verification
            unique = group.records - (v.duplicated if v is not None else 0)
            complete = complete and v is not None and v.missing == 0 and unique >= run.before + produced.records
    slowest = max(times) if times and not any(math.isnan(t) for t in times) else math.nan
    ok = not math.isnan(slowest)
    sentence = (f"caught up with a backlog of {backlog:,} records in {slowest:,.1f} s, reading {min(rates):,.0f} records/s"
                + ("; every record, backlog and new, was read (by sequence number)" if complete else "")
                if ok else
                f"did not catch up with a backlog of {backlog:,} records within the {c.timeout_s:g} s time-out: "
                f"{max(last_lags):,.0f} records behind at its end, reading {min(rates):,.0f} records/s")
    return {"caught_up": ok, "seconds": slowest, "timeout_s": c.timeout_s, "backlog_records": backlog,
            "read_records_per_s": min(rates) if rates else math.nan, "lag_at_timeout": max(last_lags, default=math.nan),
            "every_record_read": complete, "threshold_records": workload.rate * workload.window_s, "sentence": sentence}


def measure(target: Target, workload: CapacityWorkload, source: str = "", folder: Path | None = None) -> tuple[Path, dict[str, Any]]:
    """Check, then measure ``workload`` into ``folder`` (None: a new capacity run folder; a study's: its run
    folder's ``capacity/``); returns the folder and the verdict."""
    check(target, workload)
    if folder is None:
        folder = run_dir()
    else:
        folder.mkdir(parents=True, exist_ok=True)
    print(f"kperf: capacity run folder {folder}", file=sys.stderr)
    return folder, Capacity(target, workload, folder, source).measure()


def check(target: Target, workload: CapacityWorkload) -> None:
    """Every spec a trial runs, before any load and before a run folder is made (librdkafka judges the client
    settings here too: a workload built in code has not been through the file's checks); that its faults can
    reach the brokers (kperf.drivers.fault_kinds.require_reachable); with Dask workers (``--workers``),
    that they can run a trial's load processes all at once."""
    checks.require(workload.processes, f"a trial of {workload.name} runs at once (its producers and every group's consumers)")
    features.require(target.bootstrap, features.PRIMED)
    fault_kinds.require_reachable([phase.fault for phase in workload.faults if phase.enabled], target.bootstrap)
    for stream in workload.streams:
        producer = producer_spec(target.bootstrap, workload, stream, "check", workload.rate, duration_s=workload.duration_s)
        producer.check(librdkafka=True)
        features.require(target.bootstrap, features.for_producer(producer.config,
                                                                 transactional=producer.transactions is not None))
        for consumer in consumer_specs(target.bootstrap, workload, stream, "check", 1, workload.duration_s):
            consumer.check(librdkafka=True)
            described = features.GROUPS_DESCRIBED if consumer.share is None else []  # a producer waits for it to form
            features.require(target.bootstrap, [*features.for_consumer(consumer.config, consumer.share is not None),
                                                *described])
        for processor in processor_specs(target.bootstrap, workload, stream, "check", 1):
            processor.check()
            features.require(target.bootstrap, [*features.TRANSACTIONS, *features.OFFSETS_IN_TRANSACTIONS])


def producer_spec(bootstrap: str, w: CapacityWorkload, s: Stream, topic: str, rate: float, duration_s: float | None = None,
                  records: int | None = None) -> ProducerSpec:
    """A stream's producers: paced at ``rate`` for ``duration_s``, or (rate -1) ``records`` as fast as they can."""
    return ProducerSpec(bootstrap, topic, s.record_size, records=records, duration_s=duration_s, rate=rate,
                        payload=s.payload, config=s.producer_config, producers=s.producers, window_s=w.window_s,
                        sizes=s.sizes, keys=s.keys, key_zipf_s=s.zipf_s, warmup_records=WARMUP_RECORDS,
                        give_up_behind_s=give_up_s(w), transactions=s.transactions)


def give_up_s(w: CapacityWorkload) -> float:
    """How late a record may be before the producers give up on a rate: far past any latency bound, so a trial far
    above capacity ends instead of sending, for minutes, records already too late to count."""
    bounds = [s.max_ms / 1000 for s in (w.slos.produce_latency, w.slos.end_to_end_latency) if s is not None]
    return max([GIVE_UP_S, *(2 * b for b in bounds)])


def consumer_specs(bootstrap: str, w: CapacityWorkload, s: Stream, topic: str, records: int,
                   duration_s: float, sinks: Mapping[str, str] | None = None,
                   sending_s: float = 0.0) -> list[ConsumerSpec]:
    """One spec per consumer group of a stream, each a new group (so it reads the topic from its start); a share
    group's made and named by the consumer (kperf.drivers.consumer); a processing group's reads its sink topic
    (``sinks``, by group; the stream's topic until there is one) read_committed, timed from the source. Each stops
    IDLE_S after its last record, once the producers' ``sending_s`` is over."""
    return [ConsumerSpec(bootstrap, (sinks or {}).get(g.name, topic), records=records, duration_s=duration_s,
                         idle_timeout_s=IDLE_S, sending_s=sending_s,
                         config={ISOLATION: "read_committed"} if g.processed is not None else g.settings,
                         consumers=1 if g.processed is not None else g.consumers,
                         group="" if g.share else groups.fresh_name(g.name), end_to_end=True, window_s=w.window_s,
                         join_timeout_s=w.join_timeout_s, share=g.share)
            for g in s.groups]


def processor_specs(bootstrap: str, w: CapacityWorkload, s: Stream, topic: str, records: int,
                    sinks: Mapping[str, str] | None = None, sending_s: float = 0.0) -> list[ProcessorSpec]:
    """One processor per processing group of a stream: the stream's ``records`` from ``topic`` to its sink topic
    (``sinks``, by group), in its transactions, a new group of its own, stopping as a group's consumer does."""
    return [ProcessorSpec(bootstrap, topic, (sinks or {}).get(g.name, "sink"), records, g.processed, config=g.settings,
                          idle_timeout_s=IDLE_S, join_timeout_s=w.join_timeout_s, sending_s=sending_s,
                          group=groups.fresh_name(g.name))
            for g in s.groups if g.processed is not None]

