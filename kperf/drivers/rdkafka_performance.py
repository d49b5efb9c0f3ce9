"""librdkafka's own ``rdkafka_performance``: the ceiling of any driver built on librdkafka, kperf's Python ones included.

``make rdkafka-perf`` builds it from the example source of the librdkafka that
the npm package node-rdkafka vendors, linked against the librdkafka the
confluent-kafka wheel ships, into the cache (never into the repository);
``kperf bench`` runs it beside the Python drivers. It gets the settings kperf's
own drivers use, not its built-in ones (``linger.ms`` 1000 for the producer, a
fetch back-off of a second for the consumer), so a ratio measures the Python
layer alone. Its records carry a header of the size of kperf's identity header
(under another name: consumers never take it for one).

Only the final summary line is read (see :func:`parse`), as the example prints
it (``print_stats``): the producer's time runs from its first send to the last
delivery report, the consumer's from the first record to the last, like kperf's
``fetch_records_per_s``.
"""

from __future__ import annotations

import re
import resource
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from kperf.drivers.consumer import THROUGHPUT_CONFIG
from kperf.drivers.payloads import IDENTITY
from kperf.errors import KperfError
from kperf.kafka import groups, security
from kperf.paths import cache_dir
from kperf.processes import die_with_parent
from kperf.results import CLIENT_CPU, Measurement

CLIENT = "rdkafka_performance"
MAKE_TARGET = "make rdkafka-perf"
STARTUP_S = 30.0  # connecting and joining the group; then at least SLOWEST_RECORDS_PER_S: only a hang hits the limit
SLOWEST_RECORDS_PER_S = 2000.0
PRODUCER_CONFIG = {"linger.ms": 5}  # librdkafka's default, which kperf's producer keeps (the example sets 1000)
PAD_HEADER = "rdkafka-pad=" + "x" * IDENTITY.itemsize

_PRODUCED = re.compile(
    r"^% (?P<sent>\d+) messages produced \((?P<bytes>\d+) bytes\), (?P<records>\d+) delivered "
    r"\(offset -?\d+, (?P<failed>\d+) failed\) in (?P<ms>\d+)ms: (?P<rate>\d+) msgs/s and [\d.]+ MB/s, "
    r"(?P<produce_failures>\d+) produce failures, \d+ in queue, .* compression$",
    re.MULTILINE,
)
_CONSUMED = re.compile(
    r"^% (?P<records>\d+) messages \((?P<bytes>\d+) bytes\) consumed in (?P<ms>\d+)ms: (?P<rate>\d+) msgs/s", re.MULTILINE
)


def binary() -> Path | None:
    """The built tool, or None when ``make rdkafka-perf`` has not built it (no C compiler or npm, or not run)."""
    path = cache_dir() / "rdkafka-perf" / "rdkafka_performance"
    return path if path.is_file() else None


def parse(output: str, role: str) -> Measurement:
    """The last summary line of the tool's ``output`` as a Measurement (the tool prints one a second and one at the
    end); KperfError when there is none. Bytes are payload bytes, as kperf counts them."""
    found = list((_PRODUCED if role == "producer" else _CONSUMED).finditer(output))
    if not found:
        last = output.strip().splitlines()[-1:] or ["(no output)"]
        raise KperfError(f"{CLIENT} printed no {role} summary: {last[0][:300]}")
    line = found[-1]
    errors = {}
    if role == "producer":
        errors = {name: int(line[name]) for name in ("failed", "produce_failures") if int(line[name])}
    records, rate = int(line["records"]), int(line["rate"])
    # The time it prints is whole milliseconds, its rate from microseconds: the time from the rate is the finer.
    seconds = records / rate if rate else int(line["ms"]) / 1000
    # The producer's bytes are those sent, and every one of them delivered: sent bytes scaled to the delivered.
    size = int(line["bytes"]) * records // max(int(line["sent"]), 1) if role == "producer" else int(line["bytes"])
    return Measurement(role=role, client=CLIENT, records=records, bytes=size, seconds=seconds, errors=errors)


def conf_file(settings: Mapping[str, Any]) -> str:
    """``settings`` as the tool's ``-X file=`` reads them: one ``name=value`` a line, taken as written."""
    lines = []
    for name, value in settings.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if "\n" in text or not text:
            raise KperfError(f"{CLIENT} cannot take the setting {name}: an empty value or one of several lines")
        lines.append(f"{name}={text}\n")
    return "".join(lines)


def run(role: str, bootstrap: str, topic: str, records: int, record_size: int = 0,
        config: Mapping[str, Any] | None = None) -> Measurement:
    """Produce ``records`` of ``record_size`` bytes to ``topic``, or consume ``records`` from its beginning (a new
    group), with ``rdkafka_performance``; KperfError when it is not built, fails or hangs."""
    tool = binary()
    if tool is None:
        raise KperfError(f"{CLIENT} is not built: run '{MAKE_TARGET}' (needs a C compiler and npm)")
    defaults = PRODUCER_CONFIG if role == "producer" else THROUGHPUT_CONFIG
    settings = {**defaults, **(config or {}), **security.current().librdkafka()}
    # -G: a consumer group (subscribe, as kperf's consumer does), new so the topic is read from its beginning.
    mode = ["-P", "-s", str(record_size), "-H", PAD_HEADER] if role == "producer" else ["-G", groups.fresh_name()]
    with tempfile.TemporaryDirectory(prefix="kperf-rdkafka-") as private:  # mode 0700: a password in it stays private
        conf = Path(private) / "client.conf"
        conf.write_text(conf_file(settings))
        argv = [str(tool), *mode, "-t", topic, "-b", bootstrap, "-c", str(records), "-X", f"file={conf}"]
        limit = STARTUP_S + 2 * records / SLOWEST_RECORDS_PER_S
        before = resource.getrusage(resource.RUSAGE_CHILDREN)  # the tool's CPU time: what a load host pays for it
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=limit, check=False,
                                  preexec_fn=die_with_parent)  # a killed bench leaves no tool running on
        except subprocess.TimeoutExpired:
            raise KperfError(f"{CLIENT} did not finish within {limit:.0f} s and was killed") from None
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise KperfError(f"{CLIENT} failed (exit code {done.returncode}): {last[0][:300]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return replace(parse(done.stdout, role), measures={CLIENT_CPU: cpu_s})
