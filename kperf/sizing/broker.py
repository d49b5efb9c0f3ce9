"""The broker a plan sizes with: its cores, disk throughput and size, network and memory, as the user describes it.

``cores=8,disk_mib_s=250,disk_gib=1000,network_gbit_s=10,memory_gib=32``: every
figure optional but cores (a figure not given leaves its resource unanswered,
never guessed); no description means a broker like the measured host (its cores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from kperf.errors import KperfError

MIB = 2**20


@dataclass(frozen=True)
class Broker:
    cores: float
    disk_mib_s: float | None = None
    disk_gib: float | None = None
    network_gbit_s: float | None = None
    memory_gib: float | None = None
    described: str = ""  # how the user said it, or where it came from

    @property
    def network_mib_s(self) -> float | None:
        """One direction of the network (a NIC is full duplex), in MiB/s."""
        return None if self.network_gbit_s is None else self.network_gbit_s * 1e9 / 8 / MIB


FIGURES = tuple(f.name for f in fields(Broker) if f.name != "described")


def parse(text: str) -> Broker:
    """``key=value,...`` as a Broker; a key it does not know, a figure that is not a positive number, or no
    cores, refused in one line."""
    given: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in FIGURES:
            raise KperfError(f"--broker: {part!r} is not one of {', '.join(f + '=N' for f in FIGURES)}")
        try:
            number = float(value)
        except ValueError:
            raise KperfError(f"--broker: {key}={value.strip()!r} is not a number") from None
        if not math.isfinite(number) or number <= 0:
            raise KperfError(f"--broker: {key}={value.strip()} must be a positive number")
        given[key] = number
    if "cores" not in given:
        raise KperfError("--broker: give its cores (cores=N), and what else you know of it: "
                         + ", ".join(f + "=N" for f in FIGURES[1:]))
    return Broker(**given, described=text)


def like_host(cores: float) -> Broker:
    """A broker like the host the run measured on: its cores, nothing else known."""
    if not cores > 0:
        raise KperfError("the run does not say how many cores its host had: describe the broker with --broker")
    return Broker(cores=cores, described=f"like the measured host ({cores:g} cores)")
