"""The brokers' own view of a run: where a request's time goes, how idle their threads are, bytes in and out.

Read from Prometheus text: each local broker's JMX exporter (``kperf cluster up``
attaches it with ``jmx-exporter.yaml``), or, on a user's cluster, the exporter
endpoints (``.../metrics``) or the Prometheus server (any other URL: its
``/federate``) the user names. The names below are those that config exports,
which are also those of the exporter's example Kafka config; where an endpoint
does not have a figure, the figure is NaN, never a guess.

Kafka's request times are Yammer histograms: the exporter reads each one's
Count and its Mean over the broker's life, so a window's mean is
``(mean * count)`` at its end less the same at its start, over the count's
growth. Counters are compared per series (per broker), so a broker restarted
within a window (its counts back to zero) gives NaN rather than a wrong delta.
"""

from __future__ import annotations

import base64
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from types import MappingProxyType

from prometheus_client.parser import text_string_to_metric_families

from kperf.errors import KperfError

CHECK_TIMEOUT_S = 10.0
MIB = 1024 * 1024

# Kafka's request names (the `request` label) -> kperf's column prefix. Fetch is the followers' replication.
REQUESTS = {"Produce": "produce", "FetchConsumer": "fetch_consumer", "Fetch": "fetch"}
# The phases of a request's time (RequestMetrics histogram names, lower-cased by the exporter) -> column part.
PHASES = {
    "totaltimems": "total",
    "requestqueuetimems": "request_queue",
    "localtimems": "local",
    "remotetimems": "remote",  # waiting for others: followers' replication of a produce (acks=all), fetch.min.bytes
    "responsequeuetimems": "response_queue",
    "responsesendtimems": "response_send",
}
# The metric names as the exporter (1.0.1) writes them: counters get a `_total` suffix it adds (older
# exporters did not: both are read).
PREFIX = "kafka_"
REQUEST_TIME_COUNT = "kafka_network_requestmetrics_{phase}_count_total"
REQUEST_TIME_MEAN = "kafka_network_requestmetrics_{phase}_mean"
REQUESTS_TOTAL = "kafka_network_requestmetrics_requests_total"  # one series per request version
NETWORK_IDLE = "kafka_network_socketserver_networkprocessoravgidlepercent"  # a fraction, over Kafka's recent samples
HANDLER_IDLE = "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count_total"  # idle ns per thread
BROKER_HANDLER_IDLE = "kafka_server_kafkarequesthandlerpool_brokerrequesthandleravgidlepercent_count_total"
BYTES_IN = "kafka_server_brokertopicmetrics_bytesin_total"
BYTES_OUT = "kafka_server_brokertopicmetrics_bytesout_total"
MESSAGES_IN = "kafka_server_brokertopicmetrics_messagesin_total"
VERSION = "kafka_server_app_info_version"  # label `version`
KNOWN = {REQUEST_TIME_COUNT.format(phase=p) for p in PHASES} | {REQUEST_TIME_MEAN.format(phase=p) for p in PHASES} | {
    REQUESTS_TOTAL, NETWORK_IDLE, HANDLER_IDLE, BROKER_HANDLER_IDLE, BYTES_IN, BYTES_OUT, MESSAGES_IN, VERSION}
# What a Prometheus server is asked for: these metrics only, whatever else it holds.
FEDERATE_MATCH = '{__name__=~"kafka_(network_requestmetrics|network_socketserver|server_kafkarequesthandlerpool|' \
    'server_brokertopicmetrics|server_app_info)_.*"}'

Labels = tuple[tuple[str, str], ...]
SeriesKey = tuple[int, str, Labels]  # (endpoint index, metric name, sorted labels)


@dataclass(frozen=True)
class Scrape:
    """One reading of every endpoint: each series' value, keyed by endpoint, name and labels."""

    values: Mapping[SeriesKey, float]

    def series(self, name: str, **labels: str) -> dict[tuple[int, Labels], float]:
        """The series of ``name`` (or, from older exporters, ``name`` less its ``_total``) whose labels include
        ``labels``, keyed by endpoint and labels."""
        names = {name, name.removesuffix("_total")}
        wanted = set(labels.items())
        return {(endpoint, lbls): value for (endpoint, metric, lbls), value in self.values.items()
                if metric in names and wanted <= set(lbls)}

    def total(self, name: str, **labels: str) -> float:
        """The sum of those series (over brokers, request versions); NaN when there is none."""
        found = self.series(name, **labels)
        return math.fsum(found.values()) if found else math.nan


class BrokerMetrics:
    """The metrics endpoints of one cluster's brokers (JMX exporter ``/metrics`` URLs or Prometheus servers)."""

    def __init__(self, urls: Iterable[str]) -> None:
        self.urls = list(urls)
        if not self.urls:
            raise KperfError("no broker metrics endpoint given: the broker view is unavailable")
        for url in self.urls:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise KperfError(f"broker metrics URL {redact(url)!r} is not an http(s) URL")

    def check(self, timeout_s: float = CHECK_TIMEOUT_S) -> Scrape:
        """A first scrape, refused in one line naming the URL when an endpoint does not answer within
        ``timeout_s`` or answers with no Kafka broker metrics (before any load is started)."""
        scrape = self.scrape(timeout_s)
        known = {n.removesuffix("_total") for n in KNOWN}
        for index, url in enumerate(self.urls):
            if not any(endpoint == index and name.removesuffix("_total") in known for endpoint, name, _ in scrape.values):
                raise KperfError(f"broker metrics endpoint {redact(url)} answered, but with no Kafka broker metrics "
                                 f"(such as {BYTES_IN}): is it a broker's JMX exporter, or a Prometheus server scraping one?")
        return scrape

    def scrape(self, timeout_s: float = CHECK_TIMEOUT_S) -> Scrape:
        """Every endpoint read at once (so the brokers' readings are close in time), within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        pool = ThreadPoolExecutor(max_workers=len(self.urls))
        try:
            futures = [pool.submit(_read, url, timeout_s) for url in self.urls]
            values: dict[SeriesKey, float] = {}
            for index, (url, future) in enumerate(zip(self.urls, futures)):
                try:
                    text = future.result(timeout=max(0.0, deadline - time.monotonic()))
                except FutureTimeout:
                    raise KperfError(f"broker metrics endpoint {redact(url)} did not answer within {timeout_s:.0f} s") from None
                values.update(parse(text, index, url))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # a reader still stuck ends at its own socket timeout
        return Scrape(MappingProxyType(values))


def parse(text: str, endpoint: int = 0, url: str = "") -> dict[SeriesKey, float]:
    """The Kafka series of one endpoint's Prometheus text (other metrics, e.g. the JVM's, are left out)."""
    values: dict[SeriesKey, float] = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name.startswith(PREFIX):
                    values[(endpoint, sample.name, tuple(sorted(sample.labels.items())))] = float(sample.value)
    except ValueError as exc:
        raise KperfError(f"broker metrics endpoint {redact(url)} answered with something that is not Prometheus "
                         f"text: {str(exc)[:200]}") from None
    return values


def between(before: Scrape, after: Scrape, seconds: float) -> dict[str, float]:
    """The brokers' figures over the ``seconds`` between two scrapes, as flat ``broker.*`` columns.

    Times are means per request in ms, weighted by the requests each broker
    served; idle ratios are averaged over brokers (in %); rates are summed
    over brokers. NaN where an endpoint lacks a figure or a counter went back.
    """
    columns: dict[str, float] = {}
    for request, prefix in REQUESTS.items():
        for phase, part in PHASES.items():
            columns[f"broker.{prefix}_{part}_ms"] = _window_mean(before, after, phase, request)
        served = _growth(before, after, REQUESTS_TOTAL, new_series_from_zero=True, request=request)
        columns[f"broker.{prefix}_requests"] = served
        columns[f"broker.{prefix}_requests_per_s"] = served / seconds
    columns["broker.network_idle_pct"] = _mean_over_brokers(after.series(NETWORK_IDLE)) * 100
    columns["broker.handler_idle_pct"] = _handler_idle_pct(before, after, seconds)
    columns["broker.bytes_in_mib_per_s"] = _growth(before, after, BYTES_IN) / seconds / MIB
    columns["broker.bytes_out_mib_per_s"] = _growth(before, after, BYTES_OUT) / seconds / MIB
    columns["broker.messages_in_per_s"] = _growth(before, after, MESSAGES_IN) / seconds
    return columns


def kafka_version(scrape: Scrape) -> str | None:
    """The brokers' Kafka release (app-info), or None when no endpoint tells it; brokers of mixed
    releases (a rolling upgrade) give them all, comma-separated."""
    versions = sorted({dict(labels)["version"] for _, labels in scrape.series(VERSION) if "version" in dict(labels)})
    return ", ".join(versions) or None


def redact(url: str) -> str:
    """``url`` without what may carry a secret (user:password@, the query), for messages and records."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def scrape_url(url: str) -> str:
    """What to GET: a ``.../metrics`` URL as it is (an exporter), else the Prometheus server's federation
    of the Kafka metrics kperf reads (the same text format)."""
    parts = urllib.parse.urlsplit(url)
    if parts.path.rstrip("/").endswith("/metrics"):
        return url
    query = urllib.parse.urlencode({"match[]": FEDERATE_MATCH})
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/federate", query, ""))


def _read(url: str, timeout_s: float) -> str:
    """GET one endpoint's text; credentials in the URL go as HTTP basic auth, never into a message."""
    parts = urllib.parse.urlsplit(scrape_url(url))
    request = urllib.request.Request(urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])))
    request.add_header("Accept", "text/plain;version=0.0.4")
    if parts.username is not None:
        userinfo = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        request.add_header("Authorization", "Basic " + base64.b64encode(userinfo.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body: bytes = response.read()
            return body.decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        raise KperfError(f"broker metrics endpoint {redact(url)} answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise KperfError(f"broker metrics endpoint {redact(url)} did not answer: {_one_line(reason)}") from None


def _one_line(reason: object) -> str:
    return re.sub(r"\s+", " ", str(reason)).strip()[:200] or type(reason).__name__


def _pairs(before: Scrape, after: Scrape, name: str, new_series_from_zero: bool = False,
           **labels: str) -> list[tuple[float, float]] | None:
    """(start, end) of each series of ``name`` in ``after``; None when there is none, or one went back or
    is missing at the start (unless a missing one starts at zero: Kafka makes some meters at first use)."""
    start, end = before.series(name, **labels), after.series(name, **labels)
    if not end:
        return None
    pairs = []
    for key, last in end.items():
        first = start.get(key, 0.0 if new_series_from_zero else math.nan)
        if math.isnan(first) or last < first:
            return None
        pairs.append((first, last))
    return pairs


def _growth(before: Scrape, after: Scrape, name: str, new_series_from_zero: bool = False, **labels: str) -> float:
    """How much the counter ``name`` grew, summed over its series; NaN when it cannot be told."""
    pairs = _pairs(before, after, name, new_series_from_zero, **labels)
    return math.nan if pairs is None else math.fsum(last - first for first, last in pairs)


def _window_mean(before: Scrape, after: Scrape, phase: str, request: str) -> float:
    """The mean time (ms) of ``phase`` over the requests served between the scrapes, across brokers."""
    count_name, mean_name = REQUEST_TIME_COUNT.format(phase=phase), REQUEST_TIME_MEAN.format(phase=phase)
    if _pairs(before, after, count_name, request=request) is None:
        return math.nan
    start_counts, end_counts = before.series(count_name, request=request), after.series(count_name, request=request)
    start_means, end_means = before.series(mean_name, request=request), after.series(mean_name, request=request)
    served = spent = 0.0
    for key, end_count in end_counts.items():  # a broker's mean series has its count's labels
        if key not in end_means or key not in start_means:
            return math.nan
        served += end_count - start_counts[key]
        spent += end_means[key] * end_count - start_means[key] * start_counts[key]
    return spent / served if served > 0 else math.nan


def _mean_over_brokers(series: Mapping[tuple[int, Labels], float]) -> float:
    return math.fsum(series.values()) / len(series) if series else math.nan


def _handler_idle_pct(before: Scrape, after: Scrape, seconds: float) -> float:
    """The request handlers' idle time over the window, in % of their time, averaged over brokers.

    Each broker's meter grows by its threads' idle nanoseconds over their
    number; a combined KRaft node's own broker pool is read when reported
    apart (its aggregate also counts the controller's handlers)."""
    name = BROKER_HANDLER_IDLE if after.series(BROKER_HANDLER_IDLE) else HANDLER_IDLE
    pairs = _pairs(before, after, name)
    if pairs is None or seconds <= 0:
        return math.nan
    return math.fsum(last - first for first, last in pairs) / len(pairs) / (seconds * 1e9) * 100
