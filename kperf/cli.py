"""The ``kperf`` command: local cluster, Kafka provisioning, study and report.

It answers at once: this module imports only what parses arguments and checks
input; each command imports its drivers, pandas or the notebook stack when it
runs, so ``--help``, ``study --plan`` and bad-input errors never wait for them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn

from kperf import __version__
from kperf.drivers.load_hosts.scheduler import WORKERS_ENV, reach, scheduler_address
from kperf.errors import KperfError
from kperf.kafka import DEFAULT_BROKERS, METRICS_ENV, release, security
from kperf.load import WINDOW_S
from kperf.study import experiment, plan, profiles

if TYPE_CHECKING:
    from kperf.kafka.target import Target
    from kperf.results import Result

EXIT_MARGIN_S = 1.0  # the interpreter's start before main(), and printing and exiting after the error


class Parser(argparse.ArgumentParser):
    """argparse with kperf's one-line errors instead of a usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> Parser:
    parser = Parser(prog="kperf", description="A reproducible Apache Kafka performance study.")
    parser.add_argument("--version", action="version", version=f"kperf {__version__}")
    parser.add_argument("--client-config", type=Path, metavar="FILE",
                        help="client properties with the cluster's SASL/TLS settings (sets $KPERF_CLIENT_CONFIG)")
    parser.add_argument("--kafka-version", metavar="X.Y.Z",
                        help="the Apache Kafka release of the local cluster and the stock tools, 3.7 or newer "
                        "(default: the pinned one; sets $KPERF_KAFKA_VERSION)")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    cl = commands.add_parser("cluster", help="a local KRaft cluster on 127.0.0.1").add_subparsers(
        dest="action", required=True, parser_class=Parser
    )
    up = cl.add_parser("up", help="start N brokers (returns when all serve) and print the bootstrap servers")
    up.add_argument("--brokers", type=int, default=DEFAULT_BROKERS, help="number of KRaft nodes (default 3)")
    up.add_argument("--port-base", type=int, help="broker i listens on BASE+i, its controller on BASE+100+i "
                    "(default: the first free block from 9092)")
    up.add_argument("--security-protocol", choices=security.PROTOCOLS,
                    help="the listener clients use: SASL (PLAIN and SCRAM-SHA-512) and/or TLS (default PLAINTEXT)")
    st = cl.add_parser("status", help="the local cluster's brokers, pids, bootstrap servers and Kafka version")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    dn = cl.add_parser("down", help="stop the local cluster's JVMs (data kept)")
    dn.add_argument("--purge", action="store_true", help="also delete the cluster's data")

    kafka = commands.add_parser("kafka", help="the Apache Kafka release kperf runs").add_subparsers(
        dest="action", required=True, parser_class=Parser
    )
    kafka.add_parser("fetch", help="fetch the pinned Kafka jars and the JMX exporter agent with Maven (or check KAFKA_HOME)")

    sd = commands.add_parser("study", help="run the experiment notebooks and write the report")
    sd.add_argument("experiments", nargs="*", help=f"experiments to run (default all: {', '.join(experiment.names())})")
    sd.add_argument("--profile", help="scale: smoke, quick (default) or seed")
    sd.add_argument("--bootstrap", help="your cluster's bootstrap servers (default: the local cluster)")
    metrics_option(sd)
    sd.add_argument("--config", type=Path, metavar="FILE.yaml",
                    help="parameter overrides: {experiment: {name: value}}, or name: value for every experiment")
    sd.add_argument("--set", dest="assignments", action="append", default=[], metavar="[EXPERIMENT.]NAME=VALUE",
                    help="override one parameter, e.g. --set batch.records=50000 or --set repeats=5 (repeatable)")
    sd.add_argument("--resume", nargs="?", const=True, type=Path, metavar="RUN_DIR",
                    help="continue a stopped study (default: the latest) with its own settings")
    sd.add_argument("--plan", action="store_true", help="print each experiment's settings and unit count; run nothing")
    sd.add_argument("--workload", type=Path, metavar="WORKLOAD.yaml",
                    help="also measure this workload file after the experiments (as kperf capacity does): the report "
                         "opens with its verdict and the experiments' setting advice for it")
    workers_option(sd)

    cp = commands.add_parser("capacity", help="can this cluster carry my load? a workload file's SLOs at its target rate, "
                             "its limit, a catch-up after a backlog, and a verdict (docs/workload.md)")
    cp.add_argument("workload", type=Path, metavar="WORKLOAD.yaml", help="the workload file, e.g. examples/smoke.yaml")
    cp.add_argument("--bootstrap", help="your cluster's bootstrap servers (default: the local cluster)")
    metrics_option(cp)
    workers_option(cp)

    pr = commands.add_parser("produce", help="measure a producer (confluent-kafka, or Kafka's ProducerPerformance)")
    target_options(pr)
    amount_options(pr)
    pr.add_argument("--record-size", type=int, default=100, help="payload bytes per record (default 100)")
    pr.add_argument("--payload", default="random", help="random (incompressible, default) or text (JSON-like)")
    pr.add_argument("--payload-file", type=Path, help="send this file's lines, like the stock tool's --payload-file")
    pr.add_argument("--throughput", type=float, default=-1, help="target records/s over all producers (-1: unthrottled)")
    pr.add_argument("--producers", type=int, default=1, help="producer processes (default 1)")
    pr.add_argument("--warmup-records", type=int, default=0, help="records per producer sent before measuring")
    pr.add_argument("--no-latency", action="store_true", help="do not record latency (to measure its cost)")
    pr.add_argument("--no-series", action="store_true", help="do not record the time series (to measure its cost)")

    co = commands.add_parser("consume", help="measure consumers of one group (confluent-kafka, or ConsumerPerformance)")
    target_options(co)
    amount_options(co)
    co.add_argument("--consumers", type=int, default=1, help="consumer processes in the group (default 1)")
    co.add_argument("--group", default="", help="consumer group (default: a new one, reading from the beginning)")
    co.add_argument("--end-to-end", action="store_true", help="record produce-to-consume latency (producer running)")

    im = commands.add_parser("import", help="record saved output of Kafka's perf tools as results")
    im.add_argument("files", type=Path, nargs="+")
    im.add_argument("--json", action="store_true", help="print the records as JSON lines")

    bn = commands.add_parser("bench", help="kperf's instruments against Kafka's own tools, side by side")
    bn.add_argument("--bootstrap", help="cluster to use (default: the local one, started if needed)")
    bn.add_argument("--workers", metavar="ADDRESS",
                    help="also compare load through this Dask scheduler's workers with direct processes (their host "
                         "should be this one); default: a scheduler and two workers started here for the comparison")
    metrics_option(bn)
    bn.add_argument("--records", type=int, default=500_000, help="records per comparison run (default 500,000)")
    bn.add_argument("--repeats", type=int, default=3, help="runs of each side of a comparison (default 3)")
    bn.add_argument("--producers", type=int, default=os.cpu_count() or 1, help="Python producer processes (default: cores)")
    bn.add_argument("--rss-records", type=int, nargs=2, default=[100_000, 10_000_000], metavar=("SMALL", "LARGE"),
                    help="record counts of the memory comparison (default 100,000 and 10,000,000)")

    ft = commands.add_parser("fit", help="fit a scaling model to your own measurements (a CSV file)")
    ft.add_argument("model", help="usl, amdahl, linear, auto (chooses among those three), size or load")
    ft.add_argument("--csv", type=Path, required=True, help="a CSV file with a header row")
    ft.add_argument("--x", required=True, help="column of N (processes, partitions), record size (size) or offered rate (load)")
    ft.add_argument("--y", required=True, help="column of throughput (records/s for size, achieved rate for load)")
    ft.add_argument("--latency", help="column of latency (load only)")
    ft.add_argument("--json", action="store_true", help="machine-readable output")

    cm = commands.add_parser("compare", help="two runs point by point: B/A with its 95%% interval, faster, slower or "
                             "no significant change (writes data/compare/A-vs-B/compare.html)")
    cm.add_argument("run_a", help="the run compared against: its folder, or its run id under data/runs")
    cm.add_argument("run_b", help="the run compared with it (after the change)")

    rp = commands.add_parser("report", help="regenerate a run folder's report from its recorded results")
    rp.add_argument("run_dir", type=Path, nargs="?", help="run folder (default: $KPERF_RUN_DIR, else the latest)")
    return parser


def metrics_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker-metrics", metavar="URL[,URL...]",
                        help=f"the brokers' metrics: a Prometheus server, or their JMX exporters' /metrics (sets "
                             f"${METRICS_ENV}; default: the local cluster's own exporters; otherwise not read)")


def workers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", metavar="ADDRESS",
                        help=f"run the load processes on this Dask scheduler's workers, e.g. tcp://host:8786 (sets "
                             f"${WORKERS_ENV}; default: processes on this host)")


def target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap", help="bootstrap servers (default: $KPERF_BOOTSTRAP or the running local cluster)")
    metrics_option(parser)
    parser.add_argument("--topic", required=True, help="an existing topic")
    parser.add_argument("--partitions", type=int, help="the partition count the topic must have (checked before load)")
    parser.add_argument("-X", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a librdkafka / Kafka client setting, e.g. -X batch.size=65536 (repeatable)")
    parser.add_argument("--client", default="python", help="python (confluent-kafka, default) or java (stock tools)")
    parser.add_argument("--json", action="store_true", help="print the result record as JSON")
    workers_option(parser)


def amount_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, help="how many records")
    parser.add_argument("--duration", type=float, help="or for how many seconds")
    parser.add_argument("--window", type=float, default=WINDOW_S, metavar="SECONDS",
                        help=f"width of the time series' windows (default {WINDOW_S:g}; no longer than the run)")


def settings(pairs: list[str]) -> dict[str, str]:
    """-X key=value pairs as a dict; a pair without '=' is an error naming it."""
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise KperfError(f"-X {pair!r} is not KEY=VALUE")
        parsed[key.strip()] = value.strip()
    return parsed


def show(results: list[Result], as_json: bool) -> None:
    for result in results:
        if as_json:
            row = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in result.row().items()}
            print(json.dumps(row, default=str))  # strict JSON: no NaN
            continue
        m = result.measurement
        line = f"{m.client} {m.role}: {m.records} records in {m.seconds:.2f} s, {m.records_per_s:,.0f} records/s, {m.mib_per_s:.2f} MiB/s"
        for kind, stats in m.latency_ms.items():
            line += f"; {kind} latency p50 {stats.get('p50', float('nan')):.1f} ms, p99 {stats.get('p99', float('nan')):.1f} ms"
        if m.errors:
            line += f"; ERRORS {dict(m.errors)}"
        if m.verification is not None:
            v = m.verification
            line += f"; verified: {v.missing} missing, {v.duplicated} duplicated of {v.expected}"
        print(line)


def load_command(args: argparse.Namespace) -> list[Result]:
    """kperf produce / consume: one measured, recorded run."""
    from kperf.drivers.consumer import ConsumerSpec
    from kperf.drivers.producer import ProducerSpec
    from kperf.kafka.target import connect
    from kperf.study import adhoc

    config = settings(args.settings)
    target = connect(args.bootstrap, start=False)
    if args.command == "produce":
        spec = ProducerSpec(
            target.bootstrap, args.topic, args.record_size, records=args.records, duration_s=args.duration,
            rate=args.throughput, payload=args.payload, payload_file=args.payload_file, config=config,
            producers=args.producers, warmup_records=args.warmup_records, record_latency=not args.no_latency,
            window_s=args.window, record_series=not args.no_series,
        )
        return [adhoc.run_produce(target, spec, args.client, args.partitions)]
    spec_c = ConsumerSpec(
        target.bootstrap, args.topic, records=args.records, duration_s=args.duration, config=config,
        consumers=args.consumers, group=args.group, end_to_end=args.end_to_end, window_s=args.window,
    )
    return [adhoc.run_consume(target, spec_c, args.client, args.partitions)]


def cluster_command(args: argparse.Namespace) -> None:
    from kperf.kafka import cluster

    if args.action == "up":
        local = cluster.LocalCluster(
            args.brokers, port_base=args.port_base, detach=True, security_protocol=args.security_protocol
        )
        state = local.start()
        if local.reused:
            print(f"kperf: a {len(state.brokers)}-broker cluster is already running", file=sys.stderr)
        if state.client_config is not None:
            print(f"kperf: {state.security_protocol} listener; kperf connects with {state.client_config} by itself, "
                  f"other clients: export {security.CONFIG_ENV}={state.client_config}", file=sys.stderr)
        print(state.bootstrap)
    elif args.action == "status":
        found = cluster.status()
        if args.json:
            print(json.dumps(found.to_json() if found else {"running": False}, indent=2))
        elif found is None:
            print("no local cluster")
        else:
            info = found.to_json()
            print(f"{'running' if info['running'] else 'stopped'}: {len(found.brokers)} brokers, "
                  f"Kafka {found.kafka_version}, bootstrap {found.bootstrap} ({found.security_protocol})")
            for b in info["brokers"]:
                print(f"  broker {b['node_id']}: port {b['port']}, pid {b['pid'] or '-'}, {b['directory']}")
    else:
        pids = cluster.down(purge=args.purge)
        print(f"stopped {len(pids)} broker(s)" + (f" (pids {' '.join(map(str, pids))})" if pids else ""))


def fit_command(args: argparse.Namespace) -> None:
    if not args.csv.exists():
        raise KperfError(f"{args.csv}: no such file")
    import dataclasses

    import pandas as pd

    from kperf.analysis import fit
    try:
        table = pd.read_csv(args.csv)
    except (OSError, ValueError) as exc:
        raise KperfError(f"{args.csv}: cannot read as CSV: {exc}") from None
    columns = [c for c in (args.x, args.y, args.latency) if c is not None]
    missing = [c for c in columns if c not in table]
    if missing:
        raise KperfError(f"{args.csv} has no column {missing[0]!r} (columns: {', '.join(map(str, table.columns))})")
    try:
        values = [pd.to_numeric(table[c]).to_numpy(dtype=float) for c in columns]
    except ValueError:
        raise KperfError(f"{args.csv}: columns {', '.join(columns)} must hold numbers") from None
    result = fit.fit_model(args.model, *values)
    print(json.dumps(dataclasses.asdict(result), indent=2) if args.json else fit.describe(result))


def study_command(args: argparse.Namespace, started: float) -> None:
    """kperf study: the settings are checked first, at once, then the cluster, then the notebooks load."""
    if args.resume is not None:
        given = [opt for opt, value in (("experiments", args.experiments), ("--profile", args.profile),
                                        ("--config", args.config), ("--set", args.assignments), ("--plan", args.plan),
                                        ("--workload", args.workload))
                 if value]
        if given:
            raise KperfError(f"--resume continues a run with its own settings: drop {given[0]}")
    else:
        overrides = profiles.parse_overrides(args.config, args.assignments)
        if args.plan:
            print(plan.show(args.experiments, args.profile, overrides))
            return
        plan.resolve(plan.check_experiments(args.experiments), profiles.resolve_profile(args.profile), overrides)
        if args.workload is not None:
            from kperf.capacity import workload

            workload.load(args.workload)  # the file's own errors at once; against the live brokers once connected
    check_reachable(args.bootstrap or (saved_bootstrap(args.resume) if args.resume is not None else None), started)
    verify_workers(started)
    from kperf.study import runner

    if args.resume is not None:
        html = runner.resume(None if args.resume is True else args.resume, bootstrap=args.bootstrap)
    else:
        html = runner.run(args.experiments, profile=args.profile, bootstrap=args.bootstrap, overrides=overrides,
                          workload=args.workload, checks=[] if args.workload is None else [partial(fits, args.workload)])
    print(f"kperf: report written to {html}")


def capacity_command(args: argparse.Namespace, started: float) -> None:
    """kperf capacity: the file is checked first (at once), then the cluster, then the phases run."""
    from kperf.capacity import workload

    workload.load(args.workload)
    check_reachable(args.bootstrap, started)
    verify_workers(started)
    from kperf.capacity import run, verdict
    from kperf.kafka.target import connect

    with connect(args.bootstrap) as target:
        folder, found = run.measure(target, workload.load(args.workload, live_brokers=target.brokers), str(args.workload))
    print(verdict.show(found))
    print(f"kperf: capacity report written to {run.report(folder)}")


def fits(workload_file: Path, target: Target) -> None:
    """Refuse, before any load, a workload file the cluster cannot hold (a replication factor above its brokers)."""
    from kperf.capacity import workload

    workload.load(workload_file, live_brokers=target.brokers)


def check_reachable(bootstrap: str | None, started: float) -> None:
    """Refuse an unreachable cluster within clients.REACH_TIMEOUT_S of the command starting (``started``), before
    the command loads its drivers or notebooks (which takes seconds). Connecting as the command will
    (kperf.kafka.target) means kperf's own secured cluster is reached with its client properties."""
    bootstrap = bootstrap or os.environ.get("KPERF_BOOTSTRAP")
    if bootstrap:
        from kperf.kafka.clients import REACH_TIMEOUT_S
        from kperf.kafka.target import connect

        connect(bootstrap, start=False, timeout=max(REACH_TIMEOUT_S - EXIT_MARGIN_S - (time.monotonic() - started), 1.0))


def verify_workers(started: float) -> None:
    """With --workers: refuse an unreachable Dask scheduler (within 10 s of the command starting, ``started``) or
    unfit workers, before any load."""
    scheduler = scheduler_address()
    if scheduler is not None:
        from kperf.kafka.clients import REACH_TIMEOUT_S

        reach(scheduler, max(REACH_TIMEOUT_S - EXIT_MARGIN_S - (time.monotonic() - started), 1.0))
        from kperf.drivers.load_hosts import checks

        checks.verify()


def saved_bootstrap(run_dir: Path | Literal[True]) -> str | None:
    """The bootstrap servers a study to resume was started with (None: the local cluster, or no such run yet)."""
    from kperf.study import runs

    try:
        folder = runs.latest_run(with_results=False) if run_dir is True else run_dir
        return json.loads((folder / runs.STUDY_FILE).read_text()).get("bootstrap")
    except (KperfError, OSError, ValueError):
        return None  # runner.resume then says what is wrong with the folder


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    args = build_parser().parse_args(argv)
    try:
        if args.client_config is not None:
            os.environ[security.CONFIG_ENV] = str(args.client_config.resolve())
        if args.kafka_version is not None:
            os.environ[release.VERSION_ENV] = release.check_version(args.kafka_version)
        if getattr(args, "broker_metrics", None):
            os.environ[METRICS_ENV] = args.broker_metrics
        if args.command != "bench" and getattr(args, "workers", None):
            os.environ[WORKERS_ENV] = args.workers
        security.current()  # a bad client properties file is reported before anything starts
        if args.command in ("produce", "consume"):
            settings(args.settings)  # a malformed -X is reported before waiting for a cluster
        if args.command in ("produce", "consume", "bench"):
            check_reachable(args.bootstrap, started)
        if args.command in ("produce", "consume"):
            verify_workers(started)
        if args.command == "cluster":
            cluster_command(args)
        elif args.command == "kafka":
            print(release.ensure_kafka().describe())
            print(f"JMX exporter agent (the local brokers' metrics): {release.ensure_jmx_exporter()}")
        elif args.command == "study":
            study_command(args, started)
        elif args.command == "capacity":
            capacity_command(args, started)
        elif args.command == "fit":
            fit_command(args)
        elif args.command in ("produce", "consume"):
            show(load_command(args), args.json)
        elif args.command == "bench":
            from kperf.kafka.target import connect
            from kperf.study import bench

            with connect(args.bootstrap) as target:
                table = bench.run(target, args.records, tuple(args.rss_records), args.producers, args.repeats,
                                  args.workers)
            print(table.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
            print(f"kperf: written to {bench.save(table)}")
        elif args.command == "import":
            from kperf.study import adhoc

            show(adhoc.import_files(args.files), args.json)
        elif args.command == "compare":
            from kperf.analysis import compare
            from kperf.study import notebooks

            html = notebooks.render_compare(*compare.check(args.run_a, args.run_b))
            print(f"kperf: comparison written to {html} (and {html.with_suffix('.md').name} beside it)")
        elif args.command == "report":
            from kperf.study import notebooks

            html = notebooks.render_report(args.run_dir)
            print(f"kperf: report written to {html} (and {html.with_suffix('.md').name} beside it)")
    except KperfError as exc:
        print(f"kperf: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kperf: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
