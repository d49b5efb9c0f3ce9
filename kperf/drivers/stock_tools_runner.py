"""One run of a Kafka stock perf tool as a subprocess: its properties file, its time limit, its failure in one line.

What it printed comes back as a :class:`~kperf.drivers.stock_tools_measurements.ToolOutput`, each stdout line with
kperf's clock of its arrival, for :mod:`kperf.drivers.stock_tools_measurements` to turn into measurements.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from kperf.drivers.stock_tools_measurements import ToolOutput
from kperf.errors import MeasurementFailed
from kperf.kafka import properties, security
from kperf.kafka.release import KafkaDistribution
from kperf.processes import die_with_parent

# Subprocess time limits: JVM start-up and connecting, plus twice the run time
# at a rate well below what any working setup reaches, so only a hang hits them.
STARTUP_S = 60.0
SLOWEST_RECORDS_PER_S = 2000.0  # producer and consumer
SLOWEST_ROUND_TRIPS_PER_S = 50.0  # EndToEndLatency: one synchronous send and poll per record

_STACK_FRAME = re.compile(r"\s*(?:at |\.\.\. \d+ more)")
_USAGE_TABLE = re.compile(r"^Option +Description *$", re.MULTILINE)
# A tool's own bounded wait that ran out, as its last message says it: EndToEndLatency's "poll() timed out before
# finding a result", a client's TimeoutException (metadata, a send, a commit).
_TIMED_OUT = re.compile(r"timed out|TimeoutException", re.IGNORECASE)


def time_limit_s(records: int, slowest_per_s: float, waits_s: float = 0.0) -> float:
    """How long a tool handling ``records`` may take: start-up, the tool's own ``waits_s``, and twice the time at
    ``slowest_per_s``."""
    return STARTUP_S + waits_s + 2 * records / slowest_per_s


def client_properties(path: Path, config: Mapping[str, Any]) -> Path:
    """``config`` plus this process's security settings, as the properties file a tool reads.

    It is written in the tool's private temporary folder (mode 0700), which is
    deleted when the tool ends: a password in it is never left behind.
    """
    return properties.write(path, {**config, **security.current().java()}, private=True)


def run(kafka: KafkaDistribution, tool: str, args: list[str], timeout_s: float, workdir: Path) -> ToolOutput:
    """Run ``tool`` to completion, or MeasurementFailed: its cause ``<tool> failed``, or ``<tool> timed out``
    (timed_out) when the tool's own wait ran out or kperf's time limit killed it.

    Its log4j output goes to ``workdir`` so stdout holds only tool output; it
    runs in a session of its own so a hung tool is killed with any children.
    Stdout is read line by line as the tool prints (Java's System.out flushes
    at each line), so each line's arrival time is kperf's clock of that moment.
    """
    argv, env = kafka.command(tool, args, log_dir=workdir)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=die_with_parent,  # a killed study (or kernel) leaves no tool running on
    )
    assert proc.stdout is not None and proc.stderr is not None
    reading = _Reading(proc.stdout, proc.stderr)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise MeasurementFailed(f"{tool} did not finish within {timeout_s:.0f} s and was killed", f"{tool} timed out",
                                timed_out=True) from None
    finally:
        reading.join()
    wall_s = time.monotonic() - start
    output = ToolOutput(tuple(reading.lines), tuple(reading.arrivals), "".join(reading.stderr), wall_s,
                        time.time() - time.monotonic())
    if proc.returncode != 0:
        raise failure(tool, proc.returncode, output.stderr or output.stdout)
    return output


def failure(tool: str, exit_code: int, output: str) -> MeasurementFailed:
    """A tool's exit with ``exit_code`` as a failed measurement: its last message; ``timed out`` when that says
    the tool's own wait ran out (a study tries such a unit once more), else ``failed``."""
    message = _last_message(output)
    timed_out = bool(_TIMED_OUT.search(message))
    return MeasurementFailed(f"{tool} failed (exit code {exit_code}): {message}",
                             f"{tool} {'timed out' if timed_out else 'failed'}", timed_out)


class _Reading:
    """A tool's stdout, line by line with each line's arrival, and its stderr, each read by a thread of its own
    (so neither pipe fills while the tool runs)."""

    def __init__(self, stdout: IO[str], stderr: IO[str]) -> None:
        self.lines: list[str] = []
        self.arrivals: list[float] = []
        self.stderr: list[str] = []
        self._threads = [threading.Thread(target=self._read_lines, args=(stdout,), daemon=True),
                         threading.Thread(target=lambda: self.stderr.append(stderr.read()), daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_lines(self, stdout: IO[str]) -> None:
        for line in stdout:
            self.arrivals.append(time.monotonic())
            self.lines.append(line)

    def join(self) -> None:
        for thread in self._threads:
            thread.join()


def _last_message(output: str) -> str:
    """The last line of ``output`` that is not a stack frame, nor the option table a tool prints after
    its error (joptsimple's, from 4.2 on): the cause, as one line."""
    output = _USAGE_TABLE.split(output, maxsplit=1)[0]
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not _STACK_FRAME.match(ln)]
    return lines[-1][:300] if lines else "(no output)"
