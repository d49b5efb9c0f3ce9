"""The ``kperf`` command: local cluster, Kafka provisioning, study and report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NoReturn

from kperf import __version__, cluster, distribution, report, study
from kperf.errors import KperfError


class Parser(argparse.ArgumentParser):
    """argparse with kperf's one-line errors instead of a usage dump."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> Parser:
    parser = Parser(prog="kperf", description="A reproducible Apache Kafka performance study.")
    parser.add_argument("--version", action="version", version=f"kperf {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    cl = commands.add_parser("cluster", help="a local KRaft cluster on 127.0.0.1").add_subparsers(
        dest="action", required=True, parser_class=Parser
    )
    up = cl.add_parser("up", help="start N brokers (returns when all serve) and print the bootstrap servers")
    up.add_argument("--brokers", type=int, default=cluster.DEFAULT_BROKERS, help="number of KRaft nodes (default 3)")
    up.add_argument("--port-base", type=int, help="broker i listens on BASE+i, its controller on BASE+100+i "
                    "(default: the first free block from 9092)")
    st = cl.add_parser("status", help="the local cluster's brokers, pids, bootstrap servers and Kafka version")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    dn = cl.add_parser("down", help="stop the local cluster's JVMs (data kept)")
    dn.add_argument("--purge", action="store_true", help="also delete the cluster's data")

    kafka = commands.add_parser("kafka", help="the Apache Kafka release kperf runs").add_subparsers(
        dest="action", required=True, parser_class=Parser
    )
    kafka.add_parser("fetch", help="fetch the pinned Kafka jars with Maven (or check KAFKA_HOME)")

    sd = commands.add_parser("study", help="run the experiment notebooks and write the report")
    sd.add_argument("experiments", nargs="*", help=f"experiments to run (default all: {', '.join(study.EXPERIMENTS)})")
    sd.add_argument("--profile", help="scale: smoke, quick (default) or seed")
    sd.add_argument("--bootstrap", help="your cluster's bootstrap servers (default: the local cluster)")

    rp = commands.add_parser("report", help="regenerate a run folder's report from its recorded results")
    rp.add_argument("run_dir", type=Path, nargs="?", help="run folder (default: the latest)")
    return parser


def cluster_command(args: argparse.Namespace) -> None:
    if args.action == "up":
        local = cluster.LocalCluster(args.brokers, port_base=args.port_base, detach=True)
        state = local.start()
        if local.reused:
            print(f"kperf: a {len(state.brokers)}-broker cluster is already running", file=sys.stderr)
        print(state.bootstrap)
    elif args.action == "status":
        state = cluster.status()
        if args.json:
            print(json.dumps(state.to_json() if state else {"running": False}, indent=2))
        elif state is None:
            print("no local cluster")
        else:
            info = state.to_json()
            print(f"{'running' if info['running'] else 'stopped'}: {len(state.brokers)} brokers, "
                  f"Kafka {state.kafka_version}, bootstrap {state.bootstrap}")
            for b in info["brokers"]:
                print(f"  broker {b['node_id']}: port {b['port']}, pid {b['pid'] or '-'}, {b['directory']}")
    else:
        pids = cluster.down(purge=args.purge)
        print(f"stopped {len(pids)} broker(s)" + (f" (pids {' '.join(map(str, pids))})" if pids else ""))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "cluster":
            cluster_command(args)
        elif args.command == "kafka":
            print(distribution.ensure_kafka().describe())
        elif args.command == "study":
            html = study.run(args.experiments, profile=args.profile, bootstrap=args.bootstrap)
            print(f"kperf: report written to {html}")
        elif args.command == "report":
            print(f"kperf: report written to {report.render(args.run_dir or study.latest_run())}")
    except KperfError as exc:
        print(f"kperf: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kperf: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
