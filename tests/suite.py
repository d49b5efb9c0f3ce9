"""``make test``'s two phases around one session cluster (docs/development.md, "The suite").

First the tests that mostly wait, in lanes; then those that measure this host, alone. Both talk to the same
3-broker cluster, started here once and stopped here whatever happened (a broker dies with this process too): the
alone phase no longer starts a cluster of its own and measures beside its JIT warm-up. Each phase has a data folder
of its own, so no test of one reads the other's runs. Run directly, pytest starts its own session cluster
(conftest.py) as before.

    python -m tests.suite LANES [pytest arguments for both phases...]
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

from tests.helpers import start_session_cluster

PHASES = (("lanes", ["--dist", "loadfile", "-m", "not alone"]), ("alone", ["-m", "alone"]))


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # SIGTERM as Ctrl-C: the finally below stops the cluster


def main(lanes: int, more: list[str]) -> int:
    signal.signal(signal.SIGTERM, _stop)
    root = Path(tempfile.mkdtemp(prefix="kperf-test-data-"))
    status = 0
    try:
        cluster, variables = start_session_cluster(root / "session-cluster")
        try:
            for name, selection in PHASES:
                (root / name).mkdir()
                env = {**os.environ, **variables, "KPERF_DATA": str(root / name)}
                argv = [sys.executable, "-m", "pytest", "-n", str(lanes if name == "lanes" else 1), *selection,
                        "--durations=20", *more]
                print(f"suite: the {name} phase: {' '.join(argv[1:])}", flush=True)
                status = subprocess.run(argv, env=env, check=False).returncode or status
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: python -m tests.suite LANES [pytest arguments...] (LANES: a number of lanes, 1 or more)")
    sys.exit(main(int(sys.argv[1]), sys.argv[2:]))
