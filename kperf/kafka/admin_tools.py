"""Kafka's own admin tools (``kafka-features.sh``, ``kafka-metadata-quorum.sh``) run for what confluent-kafka's admin
client does not have (UpdateFeatures, DescribeQuorum): with the run's credentials in a private command config
(a 0700 folder, removed with its password), within a bound, and the tool's last line as the error."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from kperf.errors import KperfError
from kperf.kafka import properties, security
from kperf.kafka.release import TOOLS, ensure_kafka

TOOL_TIMEOUT_S = 120.0  # one run of a tool (a JVM)


def run(tool: str, bootstrap: str, args: list[str], doing: str) -> str:
    """``tool`` (a key of kperf.kafka.release.TOOLS) on ``bootstrap``'s first server with ``args`` before its
    subcommand: its standard output, or a one-line error saying it failed ``doing`` and what it said."""
    script = TOOLS[tool][0]
    with tempfile.TemporaryDirectory(prefix="kperf-admin-") as private:
        config = properties.write(Path(private) / "client.properties", security.current().java(), private=True)
        argv, env = ensure_kafka().command(tool, ["--bootstrap-server", bootstrap.split(",")[0],
                                                  "--command-config", str(config), *args])
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise KperfError(f"{script} did not finish {doing} within {TOOL_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise KperfError(f"{script} on {bootstrap} failed {doing}: {said[-1] if said else f'exit code {done.returncode}'}")
    return done.stdout
