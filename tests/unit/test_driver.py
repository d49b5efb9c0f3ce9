"""One driver interface: each client's driver is chosen by name once, refuses what it cannot do, and passes values
that cross a process boundary."""

from __future__ import annotations

import pickle

import pytest

from kperf import drivers
from kperf.drivers.consumer import _fetch_measures
from kperf.drivers.driver import Driver
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.load import CLIENTS
from kperf.results import Measurement
from kperf.validity import min_span_s


def test_every_client_has_a_driver_recorded_under_its_name() -> None:
    assert set(drivers.IMPLEMENTATIONS) == set(CLIENTS)
    for client in CLIENTS:
        driver = drivers.get(client)
        assert isinstance(driver, Driver) and driver.client == client


def test_an_unknown_client_is_refused() -> None:
    with pytest.raises(KperfError, match="^unknown client 'rust': choose python or java$"):
        drivers.get("rust")


def test_specs_and_measurements_survive_pickling() -> None:
    values = [
        ProducerSpec("127.0.0.1:9092", "t", 100, records=10, config={"acks": "all"}),
        ConsumerSpec("127.0.0.1:9092", "t", records=10, expected={0: 10}),
        Measurement(role="producer", client="python", records=1, bytes=1, seconds=1.0),
    ]
    assert pickle.loads(pickle.dumps(values)) == values


@pytest.mark.parametrize(
    ("fetch_s", "fetches", "rates"),
    [(0.0, 1, False),  # every record in one fetch: no span at all (once floored at a microsecond: 1e10 records/s)
     (5.0, 1, False),  # one fetch, however late the last record came
     (0.4, 20, False),  # a span shorter than a rate may come from (kperf.validity.min_span_s)
     (2.0, 2, True)],
)
def test_the_python_consumers_fetch_rates_come_only_from_a_span_and_two_fetches(fetch_s: float, fetches: int,
                                                                                rates: bool) -> None:
    measures = _fetch_measures(25.0, fetch_s, fetches, 10_000, 10_000 * 100, min_span_s(1.0))
    assert (measures["rebalance_ms"], measures["fetch_ms"], measures["fetches"]) == (25_000, fetch_s * 1000, fetches)
    assert ("fetch_records_per_s" in measures) == ("fetch_mib_per_s" in measures) == rates
    if rates:
        assert measures["fetch_records_per_s"] == 10_000 / fetch_s


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (ProducerSpec("b", "t", 100, duration_s=5), "--duration is not supported with --client java"),
        (ProducerSpec("b", "t", 100, records=5, producers=2), "--producers is not supported with --client java"),
        (ProducerSpec("b", "t", 100, records=5, record_latency=False), "--no-latency is not supported with --client java"),
        (ConsumerSpec("b", "t", records=5, consumers=2), "--consumers is not supported with --client java"),
        (ConsumerSpec("b", "t", records=5, end_to_end=True), "--end-to-end is not supported with --client java"),
        (ConsumerSpec("b", "t"), "--records is required with --client java"),
    ],
)
def test_the_stock_tools_refuse_what_they_have_no_option_for(spec: ProducerSpec | ConsumerSpec, message: str) -> None:
    java = drivers.get("java")
    with pytest.raises(KperfError, match=f"^{message}"):
        java.check_producer(spec) if isinstance(spec, ProducerSpec) else java.check_consumer(spec)


def test_both_drivers_accept_a_plain_run_and_the_python_one_checks_librdkafka_settings() -> None:
    spec = ProducerSpec("b", "t", 100, records=5, payload="text")
    for client in CLIENTS:
        drivers.get(client).check_producer(spec)
    with pytest.raises(KperfError, match="invalid producer setting"):
        drivers.get("python").check_producer(ProducerSpec("b", "t", 100, records=5, config={"batch.size": 2**31}))
