"""Load generators behind one interface (:class:`kperf.drivers.driver.Driver`), chosen by client name.

Importing this package loads nothing heavy: an implementation (and
confluent-kafka or the Kafka jars) is loaded when :func:`get` first asks for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.load import CLIENTS

if TYPE_CHECKING:
    from kperf.drivers.driver import Driver

IMPLEMENTATIONS = {  # each of CLIENTS -> the module and class of its driver
    "python": ("kperf.drivers.python_client", "PythonClient"),
    "java": ("kperf.drivers.stock_tools", "StockTools"),
}
UNMEASURED = "python"  # the client of load that is not measured: warm-up, filling a topic for its consumers


def check_client(client: str) -> str:
    if client not in CLIENTS:
        raise KperfError(f"unknown client {client!r}: choose {' or '.join(CLIENTS)}")
    return client


def get(client: str) -> Driver:
    """The driver of ``client``: the one place a client name becomes code."""
    module, name = IMPLEMENTATIONS[check_client(client)]
    driver: Driver = getattr(importlib.import_module(module), name)()
    return driver
