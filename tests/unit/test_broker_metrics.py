"""Broker metrics from the brokers' own Prometheus text: parsing, a window's figures, the version, bad endpoints.

The scrapes under tests/data/broker-metrics/ are real (see its README); the
endpoints below are real HTTP servers on 127.0.0.1 (one closed port, one that
serves the recorded text behind basic auth, one that serves no Kafka metrics).
"""

from __future__ import annotations

import base64
import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import MappingProxyType

import pytest

from kperf import broker_columns
from kperf.errors import KperfError
from kperf.kafka import broker_metrics
from kperf.kafka.broker_metrics import BrokerMetrics, Scrape, between, kafka_version, parse, redact, scrape_url

DATA = Path(__file__).parent.parent / "data" / "broker-metrics"
BROKERS = (1, 2, 3)


def recorded(tag: str) -> Scrape:
    """The three brokers' scrapes of one round, as BrokerMetrics.scrape would give them."""
    return Scrape.combine(parse((DATA / f"{tag}-broker-{broker}.txt").read_text(), index)
                          for index, broker in enumerate(BROKERS))


def replicas_recorded(tag: str, brokers: tuple[int, ...]) -> Scrape:
    return Scrape.combine(parse((DATA / f"replicas-{tag}-broker-{broker}.txt").read_text(), index)
                          for index, broker in enumerate(brokers))


def replicated(tag: str) -> Scrape:
    """The three brokers around 50,000 records of 1,000 B sent to a topic of replication factor 3."""
    return Scrape.combine(parse((DATA / f"replicated-{tag}-broker-{broker}.txt").read_text(), index)
                          for index, broker in enumerate(BROKERS))


def test_each_brokers_replica_gauges_calm_and_with_a_broker_killed() -> None:
    under, leaders = broker_metrics.replicas(replicas_recorded("calm", BROKERS))
    assert under == {"0": 0, "1": 0, "2": 0} and leaders == {"0": 1, "1": 1, "2": 1}  # a partition each
    under, leaders = broker_metrics.replicas(replicas_recorded("down", BROKERS[:2]))  # broker 3 dead, out of the ISRs
    assert sum(under.values()) == 3 and sum(leaders.values()) == 3  # its partition led by another, all three short


def without(scrape: Scrape, name: str) -> Scrape:
    return Scrape(MappingProxyType({k: v for k, v in scrape.values.items() if k[1] != name}), scrape.stamps)


SECONDS = json.loads((DATA / "interval.json").read_text())["seconds"]


def test_parsing_keeps_every_kafka_series_the_config_exports_and_nothing_else() -> None:
    scrape = recorded("after")
    names = {name for _, name, _ in scrape.values}
    replicas = {broker_metrics.UNDER_REPLICATED, broker_metrics.LEADERS}  # recorded later, in replicas-*.txt
    replication = {broker_metrics.REPLICATION_BYTES_IN, broker_metrics.REPLICATION_BYTES_OUT}  # in replicated-*.txt
    # Every metric kperf reads, exactly as the exporter names them, and the JVM's CPU seconds.
    assert names | replicas | replication == broker_metrics.KNOWN | {broker_metrics.PROCESS_CPU}
    assert replicas <= {name for _, name, _ in replicas_recorded("calm", BROKERS).values}
    assert replication <= {name for _, name, _ in replicated("after").values}
    assert not any(name.startswith(("jvm_", "jmx_")) for name in names)
    # One series per broker and request: Produce, Fetch (followers), FetchConsumer.
    assert len(scrape.series(broker_metrics.REQUEST_TIME_COUNT.format(phase="totaltimems"))) == 3 * 3
    assert scrape.total(broker_metrics.REQUESTS_TOTAL, request="Produce") == 266 + 281 + 277


def test_a_window_mean_weighs_each_brokers_requests() -> None:
    columns = between(recorded("before"), recorded("after"), SECONDS)
    # Produce TotalTimeMs (mean, count) per broker, before -> after, from the recorded text:
    spent = (42.03383458646616 * 266 - 273.0 * 1) + (35.854092526690394 * 281 - 109.33333333333333 * 3) + (
        29.462093862815884 * 277 - 174.0 * 1)
    assert columns["broker.produce_total_ms"] == pytest.approx(spent / (265 + 278 + 276))
    assert columns["broker.produce_requests"] == 265 + 278 + 276
    assert columns["broker.produce_requests_per_s"] == pytest.approx((265 + 278 + 276) / SECONDS)
    # The phases add up to the total (each is whole ms per request in Kafka, so within 1 ms).
    for request in ("produce", "fetch", "fetch_consumer"):
        parts = sum(columns[f"broker.{request}_{part}_ms"] for part in
                    ("request_queue", "local", "remote", "response_queue", "response_send"))
        assert abs(parts - columns[f"broker.{request}_total_ms"]) < 1.0
    # acks=all: a produce waits for the followers (remote), who fetch from the leader.
    assert columns["broker.produce_remote_ms"] > 0 and columns["broker.fetch_requests"] > 0


def test_rates_and_idle_ratios_are_over_the_window() -> None:
    columns = between(recorded("before"), recorded("after"), SECONDS)
    # 20,000 records of 200 bytes went in, once per partition leader (replication is not BytesIn), and the
    # consumer group's few offset commits.
    assert 20_000 <= columns["broker.messages_in_per_s"] * SECONDS < 20_100
    assert 20_000 * 200 / SECONDS / 2**20 < columns["broker.bytes_in_mib_per_s"] < 2 * 20_000 * 200 / SECONDS / 2**20
    assert columns["broker.bytes_out_mib_per_s"] > 0
    for idle in ("broker.network_idle_pct", "broker.handler_idle_pct"):
        assert 0 < columns[idle] <= 100


def test_the_brokers_cpu_is_their_jvms_own_seconds_and_replication_nan_where_not_exported() -> None:
    columns = between(recorded("before"), recorded("after"), SECONDS)
    # process_cpu_seconds_total per broker, before -> after, from the recorded text.
    spent = (14.68 - 9.38) + (14.44 - 9.33) + (15.47 - 10.33)
    assert columns[broker_columns.CPU_CORES] == pytest.approx(spent / SECONDS)
    # The recorded scrapes predate the config's replication meters: not told, so NaN (never 0).
    assert math.isnan(columns[broker_columns.REPLICATION_BYTES_IN_MIB_PER_S])


def test_replication_is_counted_apart_from_the_clients_bytes() -> None:
    seconds = json.loads((DATA / "replicated-interval.json").read_text())["seconds"]
    columns = between(replicated("before"), replicated("after"), seconds)
    # Replication factor 3: each byte a leader took in, its two followers fetched and wrote (other topics'
    # few bytes, the group offsets', aside).
    written = columns[broker_columns.BYTES_IN_MIB_PER_S]
    assert 50_000 * 1_000 / seconds / 2**20 <= written
    assert columns[broker_columns.REPLICATION_BYTES_IN_MIB_PER_S] == pytest.approx(2 * written, rel=0.05)
    assert columns[broker_columns.REPLICATION_BYTES_OUT_MIB_PER_S] == pytest.approx(2 * written, rel=0.05)


def test_without_seconds_the_window_is_the_time_between_the_scrapes_dates() -> None:
    before, after = recorded("before"), recorded("after")
    assert math.isnan(before.at)  # text parsed alone is not dated
    dated = between(replace(before, at=100.0), replace(after, at=100.0 + SECONDS))
    assert dated.keys() == (told := between(before, after, SECONDS)).keys()
    assert all(dated[k] == pytest.approx(told[k], nan_ok=True) for k in told)


def test_every_column_is_named_in_broker_columns() -> None:
    names = {broker_columns.time_ms(request, phase) for request in broker_metrics.REQUESTS.values()
             for phase in broker_columns.PHASES}
    names |= {f(request) for request in broker_metrics.REQUESTS.values() for f in (broker_columns.served, broker_columns.served_per_s)}
    names |= {broker_columns.NETWORK_IDLE_PCT, broker_columns.HANDLER_IDLE_PCT, broker_columns.BYTES_IN_MIB_PER_S,
              broker_columns.BYTES_OUT_MIB_PER_S, broker_columns.MESSAGES_IN_PER_S, broker_columns.CPU_CORES,
              broker_columns.REPLICATION_BYTES_IN_MIB_PER_S, broker_columns.REPLICATION_BYTES_OUT_MIB_PER_S}
    assert set(between(recorded("before"), recorded("after"), SECONDS)) == names


def test_a_figure_an_endpoint_lacks_or_a_counter_that_went_back_is_nan() -> None:
    before, after = recorded("before"), recorded("after")
    no_means = without(after, broker_metrics.REQUEST_TIME_MEAN.format(phase="totaltimems"))
    columns = between(before, no_means, SECONDS)
    assert math.isnan(columns["broker.produce_total_ms"]) and not math.isnan(columns["broker.produce_local_ms"])
    assert math.isnan(between(before, without(after, broker_metrics.NETWORK_IDLE), SECONDS)["broker.network_idle_pct"])
    backwards = between(after, before, SECONDS)  # as if the brokers restarted in the window
    assert math.isnan(backwards["broker.produce_total_ms"]) and math.isnan(backwards["broker.bytes_in_mib_per_s"])


def test_a_prometheus_servers_federation_is_read_over_its_own_sample_times() -> None:
    before, after = (parse((DATA / f"federate-{tag}.txt").read_text()) for tag in ("before", "after"))
    seconds = json.loads((DATA / "federate-interval.json").read_text())["seconds"]
    assert len(before.series(broker_metrics.BYTES_IN)) == 3  # one endpoint, three brokers (instance labels)
    assert all(after.times(broker_metrics.BYTES_IN).values()) and kafka_version(after) == "4.3.1"
    columns = between(before, after, seconds)
    assert 20_000 <= columns["broker.messages_in_per_s"] * seconds  # at least the burst, in fewer seconds
    assert 0 < columns["broker.handler_idle_pct"] <= 100  # idle ns over the server's own scrape times
    assert columns["broker.produce_requests"] > 0 and columns["broker.produce_total_ms"] > 0
    assert columns["broker.fetch_consumer_requests"] > 0


def test_a_request_never_served_counts_zero_where_its_meters_are_exported() -> None:
    before = without(recorded("before"), broker_metrics.REQUESTS_TOTAL)
    after = Scrape(MappingProxyType({k: v for k, v in recorded("after").values.items()
                                     if not (k[1] == broker_metrics.REQUESTS_TOTAL and ("request", "Produce") in k[2])}))
    columns = between(before, after, SECONDS)
    assert columns["broker.produce_requests"] == 0 and columns["broker.produce_requests_per_s"] == 0
    assert columns["broker.fetch_requests"] > 0
    not_exported = between(before, without(after, broker_metrics.REQUESTS_TOTAL), SECONDS)
    assert math.isnan(not_exported["broker.produce_requests"]) and math.isnan(not_exported["broker.fetch_requests"])


def test_the_version_is_the_brokers_app_info() -> None:
    assert kafka_version(recorded("after")) == "4.3.1"
    assert kafka_version(without(recorded("after"), broker_metrics.VERSION)) is None


def test_urls_lose_their_secrets_in_messages_and_a_server_is_federated() -> None:
    assert redact("https://kperf:s3cret@prom.example:9090/api/?token=abc") == "https://prom.example:9090/api/"
    assert scrape_url("http://127.0.0.1:7071/metrics") == "http://127.0.0.1:7071/metrics"
    federate = scrape_url("http://127.0.0.1:9090")
    assert federate.startswith("http://127.0.0.1:9090/federate?match%5B%5D=") and "kafka_" in federate
    with pytest.raises(KperfError, match="not an http"):
        BrokerMetrics(["127.0.0.1:7071"])
    with pytest.raises(KperfError, match="port that is not a number"):
        BrokerMetrics(["http://kperf:s3cret@127.0.0.1:70x1/metrics"])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_endpoint_that_does_not_answer_is_one_line_naming_it() -> None:
    url = f"http://kperf:s3cret@127.0.0.1:{closed_port()}/metrics"
    with pytest.raises(KperfError) as error:
        BrokerMetrics([url]).check()
    message = str(error.value)
    assert redact(url) in message and "s3cret" not in message and "\n" not in message


class Endpoint(BaseHTTPRequestHandler):
    """Serves the recorded scrape of broker 1 to kperf:s3cret; no Kafka metrics at /other, a web page at /page;
    at /starting, no Kafka metrics the first time, as a broker's agent serves before Kafka registers them."""

    asked_starting = 0

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        if self.path == "/starting/metrics":
            Endpoint.asked_starting += 1
            body = b"# TYPE up gauge\nup 1\n" if Endpoint.asked_starting == 1 else (DATA / "after-broker-1.txt").read_bytes()
        elif self.path == "/other/metrics":
            body = b"# TYPE up gauge\nup 1\n"
        elif self.path == "/page/metrics":
            body = b"<html><body>Welcome</body></html>\n"
        elif self.headers.get("Authorization") == "Basic " + base64.b64encode(b"kperf:s3cret").decode():
            body = (DATA / "after-broker-1.txt").read_bytes()
        else:
            self.send_error(401)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_credentials_go_as_basic_auth_and_other_metrics_are_refused(endpoint: str) -> None:
    scrape = BrokerMetrics([f"http://kperf:s3cret@{endpoint}/metrics"]).check()
    assert kafka_version(scrape) == "4.3.1"
    with pytest.raises(KperfError, match=r"HTTP 401") as error:
        BrokerMetrics([f"http://kperf:wrong@{endpoint}/metrics"]).check()
    assert "wrong" not in str(error.value)
    with pytest.raises(KperfError, match=r"/other/metrics answered, but with no Kafka broker metrics"):
        BrokerMetrics([f"http://{endpoint}/other/metrics"]).check()
    with pytest.raises(KperfError, match=r"/page/metrics answered with something that is not Prometheus text"):
        BrokerMetrics([f"http://{endpoint}/page/metrics"]).check()


def test_a_scrape_is_dated_while_it_is_taken(endpoint: str) -> None:
    started = time.monotonic()
    scrape = BrokerMetrics([f"http://kperf:s3cret@{endpoint}/metrics"]).scrape()
    assert started <= scrape.at <= time.monotonic()


def test_a_broker_whose_metrics_are_not_registered_yet_is_asked_again(endpoint: str) -> None:
    assert kafka_version(BrokerMetrics([f"http://{endpoint}/starting/metrics"]).check()) == "4.3.1"
    assert Endpoint.asked_starting == 2
