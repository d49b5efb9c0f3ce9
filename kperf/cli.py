"""The ``kperf`` command: local cluster, Kafka provisioning, study and report.

It answers at once: this module imports only what parses arguments and checks
input; each command imports its drivers, pandas or the notebook stack when it
runs, so ``--help``, ``study --plan`` and bad-input errors never wait for them.
Every command checks all of its input before it connects to anything, and one
that loads a cluster named by ``$KPERF_BOOTSTRAP`` says so first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from kperf import __version__
from kperf.drivers.load_hosts.scheduler import WORKERS_ENV, reach, scheduler_address
from kperf.errors import KperfError, MeasurementFailed
from kperf.exits import Exit
from kperf.kafka import BOOTSTRAP_ENV, DEFAULT_BROKERS, METRICS_ENV, release, security
from kperf.load import ACK_MODES, JOIN_TIMEOUT_S, WINDOW_S, Sharing, Transactions, check_join_timeout
from kperf.study import experiment, overrides, plan, profiles

if TYPE_CHECKING:
    from kperf.drivers.specs import ConsumerSpec, ProducerSpec
    from kperf.kafka.target import Target
    from kperf.results import Result

EXIT_MARGIN_S = 1.0  # the interpreter's start before main(), and printing and exiting after the error

# The environment variables the commands read, as their --help names them; docs/environment.md is their table, and
# a test holds each command's --help to it.
VARIABLES = {
    BOOTSTRAP_ENV: "the cluster to load when --bootstrap is not given",
    profiles.PROFILE_ENV: "the profile when --profile is not given",
    WORKERS_ENV: "a Dask scheduler whose workers run the load (--workers sets it)",
    METRICS_ENV: "the brokers' metrics URLs (--broker-metrics sets it)",
    security.CONFIG_ENV: "the cluster's SASL/TLS client properties (--client-config sets it; KPERF_SASL_*, "
                         "KPERF_SSL_*, KPERF_SECURITY_PROTOCOL override it)",
    release.VERSION_ENV: "the Kafka release (--kafka-version sets it)",
    "KAFKA_HOME": "a Kafka distribution to run instead of the jars fetched with Maven",
    "JAVA_HOME": "the Java that runs Kafka and its tools",
    "KPERF_DATA": "where results and the local cluster live (default data/)",
    "KPERF_CACHE": "where the Kafka jars are kept (default .cache/)",
    "KPERF_NOTEBOOKS": "where the notebooks are (default notebooks/ of the checkout)",
    "KPERF_RUN_DIR": "the run folder when none is given",
}
KAFKA = (release.VERSION_ENV, "KAFKA_HOME", "JAVA_HOME", "KPERF_CACHE")  # the Kafka release and where it is kept
LOAD = (BOOTSTRAP_ENV, security.CONFIG_ENV, METRICS_ENV, *KAFKA, "KPERF_DATA")  # what any load on a cluster reads


class Parser(argparse.ArgumentParser):
    """argparse with kperf's one-line errors instead of a usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


@dataclass(frozen=True)
class Command:
    """One subcommand: its line in ``kperf --help``, its options, what runs it (given the arguments and when the
    command started; it returns its exit code, None for OK) and the environment variables it reads."""

    summary: str
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, float], Exit | None]  # None: Exit.OK
    reads: tuple[str, ...] = ()


def build_parser() -> Parser:
    parser = Parser(prog="kperf", description="A reproducible Apache Kafka performance study.")
    parser.add_argument("--version", action="version", version=f"kperf {__version__}")
    parser.add_argument("--client-config", type=Path, metavar="FILE",
                        help=f"client properties with the cluster's SASL/TLS settings (sets ${security.CONFIG_ENV})")
    parser.add_argument("--kafka-version", metavar="X.Y.Z",
                        help="the Apache Kafka release of the local cluster and the stock tools, 3.7 or newer "
                        f"(default: the pinned one; sets ${release.VERSION_ENV})")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, command in COMMANDS.items():
        command.options(commands.add_parser(name, help=command.summary, epilog=environment_help(command.reads),
                                            formatter_class=argparse.RawDescriptionHelpFormatter))
    return parser


def environment_help(reads: tuple[str, ...]) -> str | None:
    """The epilog of a command's --help: each environment variable it reads, and what for."""
    if not reads:
        return None
    width = max(map(len, reads))
    return "environment variables it reads:\n" + "\n".join(f"  {v:<{width}}  {what}" for v, what in VARIABLES.items() if v in reads)


def actions(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Parser]:
    """The sub-subcommands of ``parser`` (``cluster up``, ``kafka fetch``)."""
    return parser.add_subparsers(dest="action", required=True, parser_class=Parser)


def cluster_options(parser: argparse.ArgumentParser) -> None:
    cl = actions(parser)
    up = cl.add_parser("up", help="start N brokers (returns when all serve) and print the bootstrap servers")
    up.add_argument("--brokers", type=int, default=DEFAULT_BROKERS, help="number of KRaft nodes (default 3)")
    up.add_argument("--port-base", type=int, help="broker i listens on BASE+i, its controller on BASE+100+i "
                    "(default: the first free block from 9092)")
    up.add_argument("--security-protocol", choices=security.PROTOCOLS,
                    help="the listener clients use: SASL (PLAIN and SCRAM-SHA-512) and/or TLS (default PLAINTEXT)")
    up.add_argument("--broker-config", action="append", default=[], metavar="KEY=VALUE",
                    help="a broker setting over kperf's, on every node, e.g. group.initial.rebalance.delay.ms=25000 "
                         "(repeatable; recorded in the cluster's state)")
    up.add_argument("--links", action="store_true",
                    help="each broker behind a TCP proxy of its own (toxiproxy, 'make toxiproxy'), so latency and "
                         "bandwidth faults can slow one broker's link")
    st = cl.add_parser("status", help="the local cluster's brokers, pids, bootstrap servers and Kafka version")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    dn = cl.add_parser("down", help="stop the local cluster's JVMs (data kept)")
    dn.add_argument("--purge", action="store_true", help="also delete the cluster's data")


def kafka_options(parser: argparse.ArgumentParser) -> None:
    actions(parser).add_parser("fetch", help="fetch the pinned Kafka jars and the JMX exporter agent with Maven "
                                             "(or check KAFKA_HOME)")


def bootstrap_option(parser: argparse.ArgumentParser, otherwise: str) -> None:
    parser.add_argument("--bootstrap", help=f"the cluster's bootstrap servers (default: ${BOOTSTRAP_ENV}, else {otherwise})")


def study_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiments", nargs="*",
                        help=f"experiments to run (default: the profile's whole study, those of "
                             f"{', '.join(experiment.names())} it does not leave out for time)")
    parser.add_argument("--profile", help=f"scale: smoke, quick or seed (default: ${profiles.PROFILE_ENV}, else "
                                          f"{profiles.DEFAULT_PROFILE})")
    bootstrap_option(parser, "the local cluster, started if needed")
    metrics_option(parser)
    parser.add_argument("--config", type=Path, metavar="FILE.yaml",
                        help="parameter overrides: {experiment: {name: value}}, or name: value for every experiment")
    parser.add_argument("--set", dest="assignments", action="append", default=[], metavar="[EXPERIMENT.]NAME=VALUE",
                        help="override one parameter, e.g. --set batch.records=50000 or --set repeats=5 (repeatable)")
    parser.add_argument("--resume", nargs="?", const=True, type=Path, metavar="RUN_DIR",
                        help="continue a stopped study (default: the latest) with its own settings")
    parser.add_argument("--plan", action="store_true",
                        help="check everything a run checks before connecting, then print each experiment's settings "
                             "and unit count; run nothing")
    parser.add_argument("--workload", type=Path, metavar="WORKLOAD.yaml",
                        help="also measure this workload file after the experiments (as kperf capacity does): the report "
                             "opens with its verdict and the experiments' setting advice for it")
    workers_option(parser)


def join_timeout_option(parser: argparse.ArgumentParser, default: float | None) -> None:
    shown = f"{default:g}" if default is not None else "the workload file's, else " + f"{JOIN_TIMEOUT_S:g}"
    parser.add_argument("--join-timeout", type=float, default=default, metavar="SECONDS",
                        help=f"how long a consumer group may take to form before the run fails (default {shown})")


def capacity_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", type=Path, metavar="WORKLOAD.yaml", help="the workload file, e.g. examples/smoke.yaml")
    join_timeout_option(parser, None)
    bootstrap_option(parser, "the local cluster, started if needed")
    metrics_option(parser)
    workers_option(parser)
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON (missing numbers are null)")


def produce_options(parser: argparse.ArgumentParser) -> None:
    load_options(parser)
    parser.add_argument("--record-size", type=int, default=100, help="payload bytes per record (default 100)")
    parser.add_argument("--payload", default="random", help="random (incompressible, default) or text (JSON-like)")
    parser.add_argument("--payload-file", type=Path, help="send this file's lines, like the stock tool's --payload-file")
    parser.add_argument("--throughput", type=float, default=-1, help="target records/s over all producers (-1: unthrottled)")
    parser.add_argument("--producers", type=int, default=1, help="producer processes (default 1)")
    parser.add_argument("--warmup-records", type=int, default=0, help="records per producer sent before measuring")
    parser.add_argument("--no-latency", action="store_true", help="do not record latency (to measure its cost)")
    parser.add_argument("--no-series", action="store_true", help="do not record the time series (to measure its cost)")
    parser.add_argument("--transaction-records", type=int, default=0, metavar="N",
                        help="transactional: each transaction ends after N records (exactly-once's producer)")
    parser.add_argument("--transaction-ms", type=float, default=0.0, metavar="MS",
                        help="transactional: each transaction ends once MS milliseconds passed (the Java tool's way)")
    parser.add_argument("--abort-share", type=float, default=0.0, metavar="SHARE",
                        help="share of transactions aborted, evenly spread (with --transaction-records)")


def consume_options(parser: argparse.ArgumentParser) -> None:
    load_options(parser)
    parser.add_argument("--consumers", type=int, default=1, help="consumer processes in the group (default 1)")
    parser.add_argument("--group", default="", help="consumer group (default: a new one, reading from the beginning)")
    parser.add_argument("--end-to-end", action="store_true", help="record produce-to-consume latency (producer running)")
    parser.add_argument("--share", action="store_true",
                        help="the consumers are a share group's members (KIP-932), reading from the earliest offset")
    parser.add_argument("--ack", default="implicit", choices=ACK_MODES,
                        help="a share consumer's acknowledgement (default implicit: every record accepted)")
    parser.add_argument("--release", type=float, default=0.0, help="share of records released once (explicit --ack)")
    parser.add_argument("--reject", type=float, default=0.0, help="share of records rejected: archived (explicit --ack)")
    parser.add_argument("--group-setting", dest="group_settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a share group setting kperf sets before load, e.g. share.record.lock.duration.ms=15000")
    join_timeout_option(parser, JOIN_TIMEOUT_S)


def import_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--json", action="store_true", help="print the records as JSON lines")


def _transactions(args: argparse.Namespace) -> Transactions | None:
    """``kperf produce``'s transactions, when any of their options is given."""
    if not (args.transaction_records or args.transaction_ms or args.abort_share):
        return None
    return Transactions(args.transaction_records, args.transaction_ms, args.abort_share)


def at_least_one(text: str) -> int:
    """An argparse type: a whole number of 1 or more (a count of records, runs or processes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def bench_options(parser: argparse.ArgumentParser) -> None:
    bootstrap_option(parser, "the local one, started if needed")
    parser.add_argument("--workers", metavar="ADDRESS",
                        help="also compare load through this Dask scheduler's workers with direct processes (their host "
                             "should be this one); default: a scheduler and one worker (of --producers threads) started "
                             "here for the comparison")
    metrics_option(parser)
    parser.add_argument("--records", type=at_least_one, default=5_000_000,
                        help="records per comparison run (default 5,000,000: the native loops need over 3 s of them "
                             "at 100 B for a rate)")
    parser.add_argument("--repeats", type=at_least_one, default=3, help="runs of each side of a comparison (default 3)")
    parser.add_argument("--producers", type=at_least_one, default=os.cpu_count() or 1,
                        help="Python producer processes (default: cores)")
    parser.add_argument("--rss-records", type=at_least_one, nargs=2, default=[100_000, 10_000_000], metavar=("SMALL", "LARGE"),
                        help="record counts of the memory comparison (default 100,000 and 10,000,000)")
    parser.add_argument("--only", choices=("links",),
                        help="run this comparison alone: links (a producer on a local cluster with links against one "
                             "without, both started for it)")


def fit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="usl, amdahl, linear, auto (chooses among those three), size or load")
    parser.add_argument("--csv", type=Path, required=True, help="a CSV file with a header row")
    parser.add_argument("--x", required=True, help="column of N (processes, partitions), record size (size) or offered rate (load)")
    parser.add_argument("--y", required=True, help="column of throughput (records/s for size, achieved rate for load)")
    parser.add_argument("--latency", help="column of latency (load only)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def ranged(within: Callable[[float], bool], what: str, example: str) -> Callable[[str], float]:
    """An argparse type: a number ``within`` its range, refused naming ``what`` it must be, with an ``example``."""
    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number ({what}: {example})") from None
        if not within(value):
            raise argparse.ArgumentTypeError(f"must be {what} ({example}), got {text}")
        return value
    return number


factor = ranged(lambda v: 1 <= v < math.inf, "a factor of at least 1", "1.1 is 10% slower")  # compare's --threshold
share = ranged(lambda v: 0 < v <= 1, "above 0 and at most 1", "0.6 is 60%")  # plan's --utilisation


def compare_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", help="the run compared against: its folder, or its run id under data/runs")
    parser.add_argument("run_b", help="the run compared with it (after the change)")
    parser.add_argument("--threshold", type=factor, default=1.0, metavar="FACTOR",
                        help="exit 4 only when a point is significantly slower in B by more than this factor, e.g. 1.1: "
                             "10%% slower (default 1: any significant slowdown)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON (missing numbers are null)")


def plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", type=Path, help="the workload file (docs/workload.md; retention_hours for the disk)")
    parser.add_argument("--from", dest="runs", type=Path, action="append", required=True, metavar="RUN",
                        help="a measured run whose costs the plan uses: a study's or a capacity run's folder, or a run id "
                             "under data/runs (again for more runs: their records together)")
    parser.add_argument("--broker", metavar="cores=N,...",
                        help="the broker to buy: cores=, disk_mib_s=, disk_gib=, network_gbit_s=, memory_gib= "
                             "(default: like the measured host, its cores alone)")
    parser.add_argument("--utilisation", type=share, default=None,
                        help="the share of a broker's cores, disk and network the plan fills (default 0.6)")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--costs", action="store_true", help="print the fitted costs behind the plan too")
    shown.add_argument("--validate", action="store_true",
                      help="check the costs on what they were not fitted on (a replication factor, each record size "
                           "held out) and the plan on the measured host (from a resource busy to one full, capped "
                           "where a latency SLO is missed, fitted on the workload's other capacity runs) against its "
                           "latest capacity run's limit")
    shown.add_argument("--json", action="store_true", help="the plan, its fitted costs and any latency bound as JSON")


def plan_command(args: argparse.Namespace) -> None:
    # jsonschema loads rfc3987_syntax where installed (Jupyter's dependencies), which builds grammars for a second,
    # for IRI formats no workload schema uses: this command, which does nothing else, answers without it.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    from kperf.capacity import latency_bound, sizing_topics, workload
    from kperf.sizing import broker, measured, needs, text
    from kperf.study import runs

    target = workload.load(args.workload)
    described = broker.parse(args.broker) if args.broker else None
    folders = [run if run.is_dir() else runs.named(run) for run in args.runs]
    costs, host_cores = measured.costs_of(folders)
    chosen = described or broker.like_host(host_cores)
    utilisation = args.utilisation if args.utilisation is not None else needs.UTILISATION
    answer = needs.size(sizing_topics.topics(target), costs, chosen, host_cores, utilisation, target.name)
    verdict = measured.verdicts(folders).get(target.name)  # the workload's latest capacity run among --from
    bound = latency_bound.of(verdict) if verdict is not None else None
    if args.json:
        print(strict_json({**text.as_plain(answer, costs), "latency_bound": asdict(bound) if bound else None}, indent=2))
        return
    print(f"kperf plan: {target.name}: {target.describe()}")
    print("\n".join(text.lines(answer)))
    if bound is not None:
        print(f"\n{bound.line()}")
    if args.costs:
        print("\nCosts fitted:")
        print("\n".join(text.costs_lines(costs)))
    if args.validate:
        from kperf.sizing import held_out, own_cluster

        print("\nHeld out (fitted without them, each point checked against the interval of one more measurement):")
        found = held_out.checks(measured.records_of(folders))
        print(held_out.table(found).to_string(index=False))
        print("\nOver each dimension:")
        print(held_out.coverage(found).to_string(index=False))
        limit = measured.capacity_limit(verdict) if verdict is not None else None
        if verdict is not None and limit is not None:
            from kperf.capacity import latency_curve

            try:
                latency, unpredicted = latency_curve.predicted(verdict, measured.capacity_runs(folders)), ""
            except KperfError as exc:
                latency, unpredicted = None, str(exc)
            own = replace(own_cluster.predicted(costs, target.name, host_cores), latency=latency)
            print(text.own_line(own, host_cores, *limit, unpredicted))
        else:
            print(f"No capacity run of {target.name} on kperf's local cluster, with a limit measured, among --from: "
                  "the plan is not checked on the measured host.")


def report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, nargs="?", help="run folder (default: $KPERF_RUN_DIR, else the latest)")


def metrics_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker-metrics", metavar="URL[,URL...]",
                        help=f"the brokers' metrics: a Prometheus server, or their JMX exporters' /metrics (sets "
                             f"${METRICS_ENV}; default: the local cluster's own exporters; otherwise not read)")


def workers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", metavar="ADDRESS",
                        help=f"run the load processes on this Dask scheduler's workers, e.g. tcp://host:8786 (sets "
                             f"${WORKERS_ENV}; default: processes on this host)")


def load_options(parser: argparse.ArgumentParser) -> None:
    """The options ``produce`` and ``consume`` share: the cluster, topic, client, and how much to send or read."""
    bootstrap_option(parser, "the running local cluster")
    metrics_option(parser)
    parser.add_argument("--topic", required=True, help="an existing topic")
    parser.add_argument("--partitions", type=at_least_one, help="the partition count the topic must have (checked before load)")
    parser.add_argument("-X", dest="client_settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a librdkafka / Kafka client setting, e.g. -X batch.size=65536 (repeatable)")
    parser.add_argument("--client", default="python", help="python (confluent-kafka, default) or java (stock tools)")
    parser.add_argument("--loop", default="auto", metavar="LOOP",
                        help="the python client's hot loop: native (C over librdkafka, 'make native'), python (the "
                             "portable reference) or auto (default: native where built)")
    parser.add_argument("--json", action="store_true", help="print the result record as JSON")
    workers_option(parser)
    parser.add_argument("--records", type=int, help="how many records")
    parser.add_argument("--duration", type=float, help="or for how many seconds")
    parser.add_argument("--window", type=float, default=WINDOW_S, metavar="SECONDS",
                        help=f"width of the time series' windows (default {WINDOW_S:g}; no longer than the run)")


def client_settings(pairs: list[str], option: str = "-X") -> dict[str, str]:
    """-X key=value pairs (Kafka client settings; or ``option``'s, e.g. broker settings) as a dict; a pair without
    '=' is an error naming it."""
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise KperfError(f"{option} {pair!r} is not KEY=VALUE")
        parsed[key.strip()] = value.strip()
    return parsed


def strict_json(value: Any, indent: int | None = None) -> str:
    """``value`` as strict JSON: a NaN or infinity (a number not measured) is null."""
    def finite(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [finite(x) for x in v]
        return v

    return json.dumps(finite(value), indent=indent, default=str, allow_nan=False)


def show(results: list[Result], as_json: bool) -> None:
    """Each record, as JSON or one line of its figures (a failed one: none, see :func:`failed`)."""
    from kperf.results import FAILED

    for result in results:
        if as_json:
            print(strict_json(result.row()))
            continue
        m = result.measurement
        if result.row()[FAILED]:
            continue  # no rate to show: failed() gives the reason on stderr
        loop = f" ({m.loop} loop)" if m.loop else ""
        line = (f"{m.client}{loop} {m.role}: {m.records} records in {m.seconds:.2f} s, {m.records_per_s:,.0f} records/s, "
                f"{m.mib_per_s:.2f} MiB/s")
        for kind, stats in m.latency_ms.items():
            line += f"; {kind} latency p50 {stats.get('p50', float('nan')):.1f} ms, p99 {stats.get('p99', float('nan')):.1f} ms"
        if m.errors:
            line += f"; ERRORS {dict(m.errors)}"
        if m.verification is not None:
            v = m.verification
            line += f"; verified: {v.missing} missing, {v.duplicated} duplicated of {v.expected}"
        if "share_redeliveries" in m.measures:  # the Python share consumer's (the Java tool counts no more)
            line += (f"; {m.measures['share_deliveries']:,.0f} deliveries ({m.measures['share_redeliveries']:,.0f} again), "
                     f"{m.measures['share_archived']:,.0f} archived")
        if "txn_commits" in m.measures:  # a transactional producer (the Python client's: the Java tool counts none)
            line += (f"; {m.measures['txn_commits']:,.0f} transactions committed ({m.measures['txn_commit_ms_mean']:,.1f} "
                     f"ms each), {m.measures['txn_aborts']:,.0f} aborted ({m.measures['aborted_records']:,.0f} records)")
        print(line)


def load_spec(args: argparse.Namespace) -> ProducerSpec | ConsumerSpec:
    """``kperf produce|consume``'s options as a driver spec, refused by the client's driver if it cannot run it. It
    needs no cluster, so a bad option is refused at once; the bootstrap servers are filled in once connected."""
    from kperf import drivers
    from kperf.drivers.progress import PROGRESS_EVERY_S
    from kperf.drivers.specs import ConsumerSpec, ProducerSpec

    driver = drivers.get(args.client)
    config = client_settings(args.client_settings)
    if args.command == "produce":
        spec = ProducerSpec(
            "", args.topic, args.record_size, records=args.records, duration_s=args.duration,
            rate=args.throughput, payload=args.payload, payload_file=args.payload_file, config=config,
            producers=args.producers, warmup_records=args.warmup_records, record_latency=not args.no_latency,
            window_s=args.window, record_series=not args.no_series, loop=args.loop,
            transactions=_transactions(args), progress_s=PROGRESS_EVERY_S,
        )
        driver.check_producer(spec)
        return spec
    sharing = (args.ack != "implicit", args.release, args.reject, args.group_settings)
    if not args.share and any(sharing):
        raise KperfError("--ack, --release, --reject and --group-setting are a share group's: add --share")
    share = Sharing(args.ack, args.release, args.reject, client_settings(args.group_settings, "--group-setting")) \
        if args.share else None
    spec_c = ConsumerSpec("", args.topic, records=args.records, duration_s=args.duration, config=config,
                          consumers=args.consumers, group=args.group, end_to_end=args.end_to_end, window_s=args.window,
                          join_timeout_s=args.join_timeout, loop=args.loop, share=share, progress_s=PROGRESS_EVERY_S)
    driver.check_consumer(spec_c)
    return spec_c


def load_command(args: argparse.Namespace, started: float) -> Exit | None:
    """kperf produce / consume: the options checked, then the cluster reached, then one measured, recorded run; a
    run that failed (its record's ``failed`` column) exits FAILED with the reason on stderr."""
    from kperf.drivers.specs import ProducerSpec

    spec = load_spec(args)
    check_reachable(args.bootstrap, started)
    verify_workers(started)
    from kperf.kafka.target import connect
    from kperf.study import adhoc

    target = connect(args.bootstrap, start=False)
    spec = replace(spec, bootstrap=target.bootstrap)
    if isinstance(spec, ProducerSpec):
        result = adhoc.run_produce(target, spec, args.client, args.partitions)
    else:
        result = adhoc.run_consume(target, spec, args.client, args.partitions)
    show([result], args.json)
    return failed([result])


def failed(results: list[Result]) -> Exit | None:
    """FAILED when a record's measurement failed (:data:`kperf.results.FAILED`), each reason on stderr."""
    from kperf.results import FAILED

    reasons = [reason for result in results if (reason := result.row()[FAILED])]
    for reason in reasons:
        print(f"kperf: failed: {reason}", file=sys.stderr)
    return Exit.FAILED if reasons else None


def cluster_command(args: argparse.Namespace) -> None:
    from kperf.kafka import cluster

    if args.action == "up":
        local = cluster.LocalCluster(
            args.brokers, port_base=args.port_base, detach=True, security_protocol=args.security_protocol,
            broker_config=client_settings(args.broker_config, "--broker-config"), links=args.links,
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


def kafka_command(args: argparse.Namespace) -> None:
    """kperf kafka fetch: the pinned release's jars and the JMX exporter agent, fetched once."""
    print(release.ensure_kafka().describe())
    print(f"JMX exporter agent (the local brokers' metrics): {release.ensure_jmx_exporter()}")


def fit_command(args: argparse.Namespace) -> None:
    if not args.csv.exists():
        raise KperfError(f"{args.csv}: no such file")
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
    print(json.dumps(asdict(result), indent=2) if args.json else fit.describe(result))


def study_command(args: argparse.Namespace, started: float) -> Exit | None:
    """kperf study: the settings are checked first, at once, then the cluster, then the notebooks load."""
    if args.resume is not None:
        return resume_study(args, started)
    names = plan.check_experiments(args.experiments, args.profile)
    given = overrides.parse(args.config, args.assignments, names)
    settings = study_settings(names, args.profile, given)
    if args.workload is not None:
        from kperf.capacity import workload

        workload.load(args.workload)  # the file's own errors at once; against the live brokers once connected
    if args.plan:
        profile_notice(args.profile, args.experiments)
        print(plan.show(settings))
        return None
    check_reachable(args.bootstrap, started)
    profile_notice(args.profile, args.experiments)
    verify_workers(started)
    from kperf.study import runner

    html = runner.run(names, profile=args.profile, bootstrap=args.bootstrap, overrides=given,
                      workload=args.workload, checks=[] if args.workload is None else [partial(fits, args.workload)])
    return study_written(html)


def study_written(html: Path) -> Exit:
    """Where the report is; each failed unit of its run on stderr, one line each, and then Exit.FAILED."""
    from kperf.study import failures

    print(f"kperf: report written to {html}")
    failed = failures.of_run(html.parent)  # the report is written in its run folder
    for unit in failed:
        print(f"kperf: {unit.line()}", file=sys.stderr)
    if failed:
        print(f"kperf: {len(failed)} unit(s) failed; kperf study --resume {html.parent} measures them again",
              file=sys.stderr)
    return Exit.FAILED if failed else Exit.OK


def study_settings(names: list[str], profile: str | None, given: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each experiment's settings, checked as a run checks them before it connects (``--plan`` prints them): by
    name, type and range, one Dask scheduler for all, and every point by each client's driver."""
    from kperf.study import validation

    settings = plan.resolve(plan.check_experiments(names, profile), profiles.resolve_profile(profile), given)
    plan.study_workers(settings)
    for name, values in settings.items():
        validation.check_points(name, values)
    return settings


def resume_study(args: argparse.Namespace, started: float) -> Exit:
    """kperf study --resume: the run's own settings, so any other is refused."""
    given = [opt for opt, value in (("experiments", args.experiments), ("--profile", args.profile),
                                    ("--config", args.config), ("--set", args.assignments), ("--plan", args.plan),
                                    ("--workload", args.workload))
             if value]
    if given:
        raise KperfError(f"--resume continues a run with its own settings: drop {given[0]}")
    check_reachable(args.bootstrap or saved_bootstrap(args.resume), started)
    verify_workers(started)
    from kperf.study import runner

    html = runner.resume(None if args.resume is True else args.resume, bootstrap=args.bootstrap)
    return study_written(html)


def profile_notice(profile: str | None, named: Sequence[str]) -> None:
    """Say which profile $KPERF_PROFILE chose when --profile did not, and which experiments the profile's whole
    study leaves out when none is ``named``: a study's scale and scope are never a surprise."""
    chosen = profiles.resolve_profile(profile)
    if not profile and os.environ.get(profiles.PROFILE_ENV):
        print(f"kperf: profile {chosen}, from ${profiles.PROFILE_ENV} (no --profile given)", file=sys.stderr)
    for name in [] if named else plan.left_out(chosen):
        print(f"kperf: the {chosen} study leaves out {name} (its time); name it to run it: "
              f"kperf study {name} --profile {chosen}", file=sys.stderr)


def capacity_command(args: argparse.Namespace, started: float) -> Exit:
    """kperf capacity: the file is checked first (at once), then the cluster, then the phases run; it exits with
    its verdict (carried, not carried, undecided: kperf.capacity.verdict.exit_code)."""
    from kperf.capacity import workload

    workload.load(args.workload)
    if args.join_timeout is not None:
        check_join_timeout(args.join_timeout)
    check_reachable(args.bootstrap, started)
    verify_workers(started)
    from kperf.capacity import verdict
    from kperf.capacity.measure_file import measure_file, render

    folder, found = measure_file(args.workload, args.bootstrap, join_timeout_s=args.join_timeout)
    kind, why = verdict.outcome(found)
    print(strict_json({**found, "verdict": kind, "why": why, "exit": int(verdict.exit_code(found))}, indent=2)
          if args.json else verdict.show(found))
    html = render(folder)
    print(f"kperf: capacity report written to {html} (and {html.with_suffix('.md').name} beside it)",
          file=sys.stderr if args.json else sys.stdout)
    return verdict.exit_code(found)


def fits(workload_file: Path, target: Target) -> None:
    """Refuse, before any load, a workload file the cluster cannot hold (a replication factor above its brokers)."""
    from kperf.capacity import workload

    workload.load(workload_file, live_brokers=target.brokers)


def bench_command(args: argparse.Namespace, started: float) -> None:
    """kperf bench: the cluster reached, then every comparison run, printed and saved."""
    import pandas as pd

    from kperf.kafka.target import connect
    from kperf.study import bench, bench_links

    if args.only == "links":  # on clusters of its own: no target to reach
        table = pd.DataFrame(bench_links.rows(args.records, args.repeats))
    else:
        check_reachable(args.bootstrap, started)
        with connect(args.bootstrap) as target:
            table = bench.run(target, args.records, tuple(args.rss_records), args.producers, args.repeats,
                              args.workers)
    print(table.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    print(f"kperf: written to {bench.save(table)}")


def import_command(args: argparse.Namespace) -> Exit | None:
    from kperf.study import adhoc

    results = adhoc.import_files(args.files)
    show(results, args.json)
    return failed(results)


def compare_command(args: argparse.Namespace) -> Exit:
    """kperf compare: the verdict table in the terminal (or JSON), then the page; it exits with the verdict
    (kperf.analysis.compare.exit_code)."""
    from kperf.analysis import compare
    from kperf.study import notebooks

    found = compare.compared(args.run_a, args.run_b)
    print(strict_json(compare.as_json(found, args.threshold), indent=2) if args.json
          else compare.terminal(found, args.threshold))
    html = notebooks.render_compare(found.folder_a, found.folder_b)
    print(f"kperf: comparison written to {html} (and {html.with_suffix('.md').name} beside it)",
          file=sys.stderr if args.json else sys.stdout)
    return compare.exit_code(found.table, args.threshold)


def report_command(args: argparse.Namespace) -> None:
    from kperf.study import notebooks

    html = notebooks.render_report(args.run_dir)
    print(f"kperf: report written to {html} (and {html.with_suffix('.md').name} beside it)")


def check_reachable(bootstrap: str | None, started: float) -> None:
    """Refuse an unreachable cluster within clients.REACH_TIMEOUT_S of the command starting (``started``), before
    the command loads its drivers or notebooks (which takes seconds). Connecting as the command will
    (kperf.kafka.target) means kperf's own secured cluster is reached with its client properties. A cluster named
    by $KPERF_BOOTSTRAP alone is named first, on the command's first line: load never goes to it unnoticed."""
    from kperf.kafka.target import from_environment

    if not bootstrap and (bootstrap := from_environment()):
        print(f"kperf: cluster {bootstrap}, from ${BOOTSTRAP_ENV} (no --bootstrap given)", file=sys.stderr)
    if bootstrap:
        from kperf.kafka.target import connect

        connect(bootstrap, start=False, timeout=time_left(started))


def time_left(started: float) -> float:
    """What remains (at least a second) of clients.REACH_TIMEOUT_S from the command's start, for one more check."""
    from kperf.kafka.clients import REACH_TIMEOUT_S

    return max(REACH_TIMEOUT_S - EXIT_MARGIN_S - (time.monotonic() - started), 1.0)


def verify_workers(started: float) -> None:
    """With --workers: refuse an unreachable Dask scheduler (within 10 s of the command starting, ``started``) or
    unfit workers, before any load."""
    scheduler = scheduler_address()
    if scheduler is not None:
        reach(scheduler, time_left(started))
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


def untimed(run: Callable[[argparse.Namespace], Exit | None]) -> Callable[[argparse.Namespace, float], Exit | None]:
    """A command that reaches no cluster or scheduler, so has no time limit to keep."""
    return lambda args, started: run(args)


COMMANDS = {
    "cluster": Command("a local KRaft cluster on 127.0.0.1", cluster_options, untimed(cluster_command),
                       (*KAFKA, "KPERF_DATA")),
    "kafka": Command("the Apache Kafka release kperf runs", kafka_options, untimed(kafka_command), KAFKA),
    "study": Command("run the experiment notebooks and write the report", study_options, study_command,
                     (*LOAD, profiles.PROFILE_ENV, WORKERS_ENV, "KPERF_NOTEBOOKS")),
    "capacity": Command("can this cluster carry my load? a workload file's SLOs at its target rate, its limit, a "
                        "catch-up after a backlog, and a verdict (docs/workload.md)", capacity_options, capacity_command,
                        (*LOAD, WORKERS_ENV, "KPERF_NOTEBOOKS")),
    "produce": Command("measure a producer (confluent-kafka, or Kafka's ProducerPerformance)", produce_options,
                       load_command, (*LOAD, WORKERS_ENV)),
    "consume": Command("measure consumers of one group (confluent-kafka, or ConsumerPerformance)", consume_options,
                       load_command, (*LOAD, WORKERS_ENV)),
    "import": Command("record saved output of Kafka's perf tools as results", import_options, untimed(import_command),
                      ("KPERF_DATA",)),
    "bench": Command("kperf's instruments against Kafka's own tools, side by side", bench_options, bench_command, LOAD),
    "fit": Command("fit a scaling model to your own measurements (a CSV file)", fit_options, untimed(fit_command)),
    "compare": Command("two runs point by point: B/A with its 95%% interval, faster, slower or no significant change "
                       "(writes data/compare/A-vs-B/compare.html)", compare_options, untimed(compare_command),
                       ("KPERF_DATA", "KPERF_NOTEBOOKS")),
    "plan": Command("what to buy for a workload: brokers per resource, disk, partitions and load hosts from a run's "
                    "measured costs, beside the managed services' sizing rules", plan_options, untimed(plan_command),
                    ("KPERF_DATA",)),
    "report": Command("regenerate a run folder's report from its recorded results", report_options,
                      untimed(report_command), ("KPERF_RUN_DIR", "KPERF_DATA", "KPERF_NOTEBOOKS")),
}


def apply_options(args: argparse.Namespace) -> None:
    """The options that set an environment variable (so notebook kernels and load processes inherit them), checked."""
    if args.client_config is not None:
        os.environ[security.CONFIG_ENV] = str(args.client_config.resolve())
    if args.kafka_version is not None:
        os.environ[release.VERSION_ENV] = release.check_version(args.kafka_version)
    if getattr(args, "broker_metrics", None):
        os.environ[METRICS_ENV] = args.broker_metrics
    if args.command != "bench" and getattr(args, "workers", None):
        os.environ[WORKERS_ENV] = args.workers
    security.current()  # a bad client properties file is reported before anything starts


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    args = build_parser().parse_args(argv)
    try:
        apply_options(args)
        code = COMMANDS[args.command].run(args, started)
        sys.stdout.flush()  # here, not at exit: a reader gone shows as the BrokenPipeError below
    except MeasurementFailed as exc:
        print(f"kperf: failed: {exc}", file=sys.stderr)
        return Exit.FAILED
    except KperfError as exc:
        print(f"kperf: error: {exc}", file=sys.stderr)
        return Exit.ERROR
    except KeyboardInterrupt:
        print("kperf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Its reader closed stdout (``kperf ... | head``): no traceback, now or at exit's flush, and the status a
        # shell gives a process that SIGPIPE ended, as 130 is SIGINT's.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    return Exit.OK if code is None else code


if __name__ == "__main__":
    sys.exit(main())
