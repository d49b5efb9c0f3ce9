"""Which hot loop a producer or consumer process runs: the one place a loop name becomes code.

``native`` (compiled C over librdkafka, :mod:`kperf.drivers.native`) wherever ``make native`` built it, else
``python`` (confluent-kafka), the portable reference; a spec's ``loop`` may ask for one. A spec travels to its
load processes unresolved, so each process (on a Dask worker too) runs the loop its host has, and every record
says which ran (:func:`label`). Importing this loads no client: a loop is loaded when first asked for.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from kperf.drivers.native import library
from kperf.errors import KperfError

if TYPE_CHECKING:
    from kperf.drivers.loop import ConsumerLoop, ProducerLoop
    from kperf.drivers.specs import ConsumerSpec, ProducerSpec

AUTO = "auto"  # native where built, else python
LOOPS = ("native", "python")
IMPLEMENTATIONS = {  # (role, loop) -> the module and class of its implementation
    ("producer", "native"): ("kperf.drivers.native.producer_loop", "NativeProducerLoop"),
    ("producer", "python"): ("kperf.drivers.producer_loop", "PythonProducerLoop"),
    ("consumer", "native"): ("kperf.drivers.native.consumer_loop", "NativeConsumerLoop"),
    ("consumer", "python"): ("kperf.drivers.consumer_loop", "PythonConsumerLoop"),
    ("share", "python"): ("kperf.drivers.share_loop", "PythonShareLoop"),  # a share group's member: Python only
}


def check_loop(name: str) -> None:
    """Refuse, before any load, an unknown loop or a native loop this host has not built; for ``auto`` without the
    build, say once (here, before load, not in each load process) that the Python loops run."""
    if name not in (AUTO, *LOOPS):
        raise KperfError(f"unknown loop {name!r}: choose {AUTO}, {' or '.join(LOOPS)}")
    if name == "python" or (missing := library.available()) is None:
        return
    if name == "native":
        raise KperfError(missing)
    _say_once(missing)


def chosen(name: str, role: str = "producer") -> str:
    """The loop ``name`` runs as on this host for ``role``: ``auto`` is native where built (and the role has one),
    else python."""
    if name != AUTO:
        return name
    return "native" if library.available() is None and (role, "native") in IMPLEMENTATIONS else "python"


def check_share_loop(name: str) -> None:
    """Refuse, before any load, a share consumer asked to run a loop it has none of (only python)."""
    if chosen(name, "share") != "python":
        raise KperfError(f"share consumers run the python loop only, not {name!r}: --loop python or auto")


@cache
def _say_once(missing: str) -> None:
    print(f"kperf: {missing}: running the Python loops", file=sys.stderr)


def _load(role: str, name: str) -> Any:
    module, cls = IMPLEMENTATIONS[(role, chosen(name, role))]
    return getattr(importlib.import_module(module), cls)


def producer_loop(spec: ProducerSpec, producer_id: int) -> ProducerLoop:
    """The producer loop ``spec.loop`` names, for producer ``producer_id``."""
    made: ProducerLoop = _load("producer", spec.loop)(spec, producer_id)
    return made


def consumer_loop(spec: ConsumerSpec, config: Mapping[str, Any]) -> ConsumerLoop:
    """The consumer loop ``spec.loop`` names, with the librdkafka ``config`` its client gets."""
    made: ConsumerLoop = _load("consumer" if spec.share is None else "share", spec.loop)(spec, config)
    return made


def label(ran: Iterable[str]) -> str:
    """What a unit records of the loops its processes ran: one name, or each with its count when they differ
    (``native:2,python:1``: Dask workers with and without the native build)."""
    counts = Counter(ran)
    if len(counts) == 1:
        return next(iter(counts))
    return ",".join(f"{name}:{n}" for name, n in sorted(counts.items()))
