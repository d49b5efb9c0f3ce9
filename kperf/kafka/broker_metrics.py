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
import http.client
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from prometheus_client.parser import text_string_to_metric_families

from kperf import broker_columns as columns
from kperf.errors import KperfError

CHECK_TIMEOUT_S = 10.0
RECHECK_S = 0.5  # between two scrapes of an endpoint that has no Kafka metrics yet
MIB = 1024 * 1024

# Kafka's request names (the `request` label) -> kperf's column prefix. Fetch is the followers' replication.
REQUESTS = {"Produce": columns.PRODUCE, "FetchConsumer": columns.FETCH_CONSUMER, "Fetch": columns.FETCH}
# The phases of a request's time: RequestMetrics histogram names (TotalTimeMs, RequestQueueTimeMs, ..., lower-cased
# by the exporter) -> column part. Remote is waiting for others: followers' replication of a produce (acks=all),
# fetch.min.bytes.
PHASES = {f"{part.replace('_', '')}timems": part for part in columns.PHASES}
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
REPLICATION_BYTES_IN = "kafka_server_brokertopicmetrics_replicationbytesin_total"
REPLICATION_BYTES_OUT = "kafka_server_brokertopicmetrics_replicationbytesout_total"
# The JVM's own CPU seconds, which the exporter's agent adds to every scrape (not a Kafka metric, so read from
# exporters only: a Prometheus server is not asked for it, since it would answer for every process it scrapes).
PROCESS_CPU = "process_cpu_seconds_total"
VERSION = "kafka_server_app_info_version"  # label `version`
UNDER_REPLICATED = "kafka_server_replicamanager_underreplicatedpartitions"  # gauges of Kafka's ReplicaManager: the
LEADERS = "kafka_server_replicamanager_leadercount"  # broker's partitions behind on replicas, and those it leads
KNOWN = {REQUEST_TIME_COUNT.format(phase=p) for p in PHASES} | {REQUEST_TIME_MEAN.format(phase=p) for p in PHASES} | {
    REQUESTS_TOTAL, NETWORK_IDLE, HANDLER_IDLE, BROKER_HANDLER_IDLE, BYTES_IN, BYTES_OUT, MESSAGES_IN, VERSION,
    UNDER_REPLICATED, LEADERS, REPLICATION_BYTES_IN, REPLICATION_BYTES_OUT}
# What a Prometheus server is asked for: these metrics only, whatever else it holds.
FEDERATE_MATCH = '{__name__=~"kafka_(network_requestmetrics|network_socketserver|server_kafkarequesthandlerpool|' \
    'server_brokertopicmetrics|server_app_info|server_replicamanager)_.*"}'

Labels = tuple[tuple[str, str], ...]
SeriesKey = tuple[int, str, Labels]  # (endpoint index, metric name, sorted labels)


@dataclass(frozen=True)
class Scrape:
    """One reading of every endpoint: each series' value, keyed by endpoint, name and labels, and the time
    (s) of its sample where the endpoint tells it (a Prometheus server: the time it last scraped the broker).

    ``at``: when it was taken (time.monotonic()), at the middle of the reading, since the brokers read their
    counters while it ran (a unit of a second or two would otherwise gain the scrapes' own tenth of a second);
    NaN for text parsed alone."""

    values: Mapping[SeriesKey, float]
    stamps: Mapping[SeriesKey, float] = field(default_factory=lambda: MappingProxyType({}))
    at: float = math.nan

    @classmethod
    def combine(cls, scrapes: Iterable[Scrape]) -> Scrape:
        """One snapshot of several endpoints' scrapes (each parsed with its own endpoint index)."""
        values: dict[SeriesKey, float] = {}
        stamps: dict[SeriesKey, float] = {}
        for scrape in scrapes:
            values.update(scrape.values)
            stamps.update(scrape.stamps)
        return cls(MappingProxyType(values), MappingProxyType(stamps))

    def series(self, name: str, **labels: str) -> dict[tuple[int, Labels], float]:
        """The series of ``name`` (or, from older exporters, ``name`` less its ``_total``) whose labels include
        ``labels``, keyed by endpoint and labels."""
        return _select(self.values, name, labels)

    def times(self, name: str, **labels: str) -> dict[tuple[int, Labels], float]:
        """The sample times of those series that have one."""
        return _select(self.stamps, name, labels)

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
            try:
                _ = parts.port  # raises ValueError on a port that is not a number (or out of range)
            except ValueError:
                raise KperfError(f"broker metrics URL {redact(url)!r} has a port that is not a number") from None
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise KperfError(f"broker metrics URL {redact(url)!r} is not an http(s) URL")

    @property
    def exporters(self) -> bool:
        """Whether every URL is a broker's own exporter: read live, each broker apart (a Prometheus server's
        readings are as old as its last scrape, and it answers for brokers that no longer do)."""
        return all(urllib.parse.urlsplit(url).path.rstrip("/").endswith("/metrics") for url in self.urls)

    def check(self, timeout_s: float = CHECK_TIMEOUT_S) -> Scrape:
        """A first scrape, refused in one line naming the URL when an endpoint does not answer within
        ``timeout_s``, or still answers with no Kafka broker metrics at the end of it (before any load is
        started). The exporter's agent serves as soon as the JVM starts, before Kafka registers its
        metrics: a broker just started is asked again until then."""
        deadline = time.monotonic() + timeout_s
        known = {n.removesuffix("_total") for n in KNOWN}
        while True:
            scrape = self.scrape(max(deadline - time.monotonic(), 0.1))
            bare = [url for index, url in enumerate(self.urls) if not any(
                endpoint == index and name.removesuffix("_total") in known for endpoint, name, _ in scrape.values)]
            if not bare:
                return scrape
            if time.monotonic() + RECHECK_S > deadline:
                raise KperfError(f"broker metrics endpoint {redact(bare[0])} answered, but with no Kafka broker metrics "
                                 f"(such as {BYTES_IN}): is it a broker's JMX exporter, or a Prometheus server scraping one?")
            time.sleep(RECHECK_S)

    def scrape(self, timeout_s: float = CHECK_TIMEOUT_S) -> Scrape:
        """Every endpoint read at once (so the brokers' readings are close in time), within ``timeout_s``, dated;
        the first endpoint that did not answer is refused in one line."""
        readings, at = self._read_all(timeout_s)
        for reading in readings:
            if isinstance(reading, KperfError):
                raise reading
        return replace(Scrape.combine(r for r in readings if isinstance(r, Scrape)), at=at)

    def answering(self, timeout_s: float) -> tuple[Scrape, int]:
        """What the endpoints that answered within ``timeout_s`` said (a paused broker's exporter, inside its
        JVM, says nothing), dated, and how many did not answer."""
        readings, at = self._read_all(timeout_s)
        scrapes = [r for r in readings if isinstance(r, Scrape)]
        return replace(Scrape.combine(scrapes), at=at), len(readings) - len(scrapes)

    def _read_all(self, timeout_s: float) -> tuple[list[Scrape | KperfError], float]:
        """Each endpoint's scrape, or why it has none, and the middle of the reading (time.monotonic())."""
        started = time.monotonic()
        deadline = started + timeout_s
        pool = ThreadPoolExecutor(max_workers=len(self.urls))
        readings: list[Scrape | KperfError] = []
        try:
            futures = [pool.submit(_read, url, timeout_s) for url in self.urls]
            for index, (url, future) in enumerate(zip(self.urls, futures)):
                try:
                    readings.append(parse(future.result(timeout=max(0.0, deadline - time.monotonic())), index, url))
                except FutureTimeout:
                    readings.append(KperfError(f"broker metrics endpoint {redact(url)} did not answer within "
                                               f"{timeout_s:.0f} s"))
                except KperfError as exc:
                    readings.append(exc)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # a reader still stuck ends at its own socket timeout
        return readings, (started + time.monotonic()) / 2


def parse(text: str, endpoint: int = 0, url: str = "") -> Scrape:
    """The Kafka series of endpoint number ``endpoint``'s Prometheus text, and its process's CPU seconds (the JVM's
    other series left out)."""
    values: dict[SeriesKey, float] = {}
    stamps: dict[SeriesKey, float] = {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name.startswith(PREFIX) or sample.name == PROCESS_CPU:
                    key = (endpoint, sample.name, tuple(sorted(sample.labels.items())))
                    values[key] = float(sample.value)
                    if sample.timestamp is not None:
                        stamps[key] = float(sample.timestamp)
    except ValueError as exc:
        raise KperfError(f"broker metrics endpoint {redact(url)} answered with something that is not Prometheus "
                         f"text: {str(exc)[:200]}") from None
    return Scrape(MappingProxyType(values), MappingProxyType(stamps))


def between(before: Scrape, after: Scrape, seconds: float | None = None) -> dict[str, float]:
    """The brokers' figures over the ``seconds`` between two scrapes (by default the time between their dates),
    as flat ``broker.*`` columns (:mod:`kperf.broker_columns`).

    Times are means per request in ms, weighted by the requests each broker
    served; idle ratios are averaged over brokers (in %): the handlers' over
    the window, the network threads' as Kafka averages it over its last
    metric samples (30 to 60 s by default) at the window's end; rates are summed
    over brokers, each over its samples' own times when they carry one (a
    Prometheus server's readings lag by up to its scrape interval), else over
    ``seconds``. NaN where an endpoint lacks a figure or a counter went back.
    """
    if seconds is None:
        seconds = after.at - before.at
    view: dict[str, float] = {}
    for request, prefix in REQUESTS.items():
        for phase, part in PHASES.items():
            view[columns.time_ms(prefix, part)] = _window_mean(before, after, phase, request)
        view[columns.served(prefix)], view[columns.served_per_s(prefix)] = _served(before, after, seconds, request)
    view[columns.NETWORK_IDLE_PCT] = _mean(list(after.series(NETWORK_IDLE).values())) * 100
    # Each broker's meter grows by its handler threads' idle ns over their number; a combined KRaft node's own
    # broker pool is read when reported apart (the aggregate also counts the controller's handlers).
    handler_idle = BROKER_HANDLER_IDLE if after.series(BROKER_HANDLER_IDLE) else HANDLER_IDLE
    # A handler credits its idle time when it wakes (KafkaRequestHandler polls the request queue for up to 300 ms),
    # so over a unit of a second or two the credit can include idle time from before it: capped at all of it.
    view[columns.HANDLER_IDLE_PCT] = min(_mean(_rates(before, after, seconds, handler_idle)) / 1e9 * 100, 100.0)
    view[columns.BYTES_IN_MIB_PER_S] = _sum(_rates(before, after, seconds, BYTES_IN)) / MIB
    view[columns.BYTES_OUT_MIB_PER_S] = _sum(_rates(before, after, seconds, BYTES_OUT)) / MIB
    view[columns.MESSAGES_IN_PER_S] = _sum(_rates(before, after, seconds, MESSAGES_IN))
    # Kafka makes a topic's replication meters at the first replicated byte: none yet means none replicated.
    for column, name in ((columns.REPLICATION_BYTES_IN_MIB_PER_S, REPLICATION_BYTES_IN),
                         (columns.REPLICATION_BYTES_OUT_MIB_PER_S, REPLICATION_BYTES_OUT)):
        view[column] = _sum(_rates(before, after, seconds, name, new_series_from_zero=True)) / MIB
    view[columns.CPU_CORES] = _sum(_rates(before, after, seconds, PROCESS_CPU))
    return view


def kafka_version(scrape: Scrape) -> str | None:
    """The brokers' Kafka release (app-info), or None when no endpoint tells it; brokers of mixed
    releases (a rolling upgrade) give them all, comma-separated."""
    versions = sorted({dict(labels)["version"] for _, labels in scrape.series(VERSION) if "version" in dict(labels)})
    return ", ".join(versions) or None


def replicas(scrape: Scrape) -> tuple[dict[str, float], dict[str, float]]:
    """Each broker's under-replicated partitions and its partitions led, by broker (its endpoint, and its labels
    where a Prometheus server gives several brokers)."""
    def by_broker(name: str) -> dict[str, float]:
        return {f"{endpoint}{dict(labels) or ''}": value for (endpoint, labels), value in scrape.series(name).items()}
    return by_broker(UNDER_REPLICATED), by_broker(LEADERS)


def redact(url: str) -> str:
    """``url`` without what may carry a secret (user:password@, the query), for messages and records."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


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
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:  # refused, reset, cut short
        reason = getattr(exc, "reason", exc)
        raise KperfError(f"broker metrics endpoint {redact(url)} did not answer: {_one_line(reason)}") from None


def _one_line(reason: object) -> str:
    return re.sub(r"\s+", " ", str(reason)).strip()[:200] or type(reason).__name__


def _select(mapping: Mapping[SeriesKey, float], name: str, labels: Mapping[str, str]) -> dict[tuple[int, Labels], float]:
    names = {name, name.removesuffix("_total")}
    wanted = set(labels.items())
    return {(endpoint, lbls): value for (endpoint, metric, lbls), value in mapping.items()
            if metric in names and wanted <= set(lbls)}


def _pairs(before: Scrape, after: Scrape, name: str, new_series_from_zero: bool = False,
           **labels: str) -> dict[tuple[int, Labels], tuple[float, float]] | None:
    """(start, end) of each series of ``name`` in ``after`` ({} when it has none); None when one went back or is
    missing at the start (unless a missing one starts at zero: Kafka makes some meters at first use)."""
    start = before.series(name, **labels)
    pairs = {}
    for key, last in after.series(name, **labels).items():
        first = start.get(key, 0.0 if new_series_from_zero else math.nan)
        if math.isnan(first) or last < first:
            return None
        pairs[key] = (first, last)
    return pairs


def _rates(before: Scrape, after: Scrape, seconds: float, name: str, new_series_from_zero: bool = False,
           **labels: str) -> list[float] | None:
    """Each series' growth per second, over its samples' times where both carry one, else over ``seconds``;
    None when it cannot be told (a counter went back, or no time passed between a server's readings)."""
    pairs = _pairs(before, after, name, new_series_from_zero, **labels)
    if pairs is None:
        return None
    start, end = before.times(name, **labels), after.times(name, **labels)
    rates = []
    for key, (first, last) in pairs.items():
        span = end[key] - start[key] if key in start and key in end else seconds
        if span <= 0:
            return None
        rates.append((last - first) / span)
    return rates


def _sum(values: list[float] | None) -> float:
    """Their sum; NaN for None (not told) or for no value at all (not exported)."""
    return math.fsum(values) if values else math.nan


def _mean(values: list[float] | None) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def _served(before: Scrape, after: Scrape, seconds: float, request: str) -> tuple[float, float]:
    """How many ``request``s the brokers served between the scrapes, and per second. Kafka makes a request
    version's meter at its first request: none at all, where the meters are exported, means none served."""
    counts = _pairs(before, after, REQUESTS_TOTAL, new_series_from_zero=True, request=request)
    rates = _rates(before, after, seconds, REQUESTS_TOTAL, new_series_from_zero=True, request=request)
    if counts == {} and after.series(REQUESTS_TOTAL):
        return 0.0, 0.0
    growth = None if counts is None else [last - first for first, last in counts.values()]
    return _sum(growth), _sum(rates)


def _window_mean(before: Scrape, after: Scrape, phase: str, request: str) -> float:
    """The mean time (ms) of ``phase`` over the requests served between the scrapes, across brokers."""
    count_name, mean_name = REQUEST_TIME_COUNT.format(phase=phase), REQUEST_TIME_MEAN.format(phase=phase)
    counts = _pairs(before, after, count_name, request=request)
    if not counts:
        return math.nan
    start_means, end_means = before.series(mean_name, request=request), after.series(mean_name, request=request)
    served = spent = 0.0
    for key, (start_count, end_count) in counts.items():  # a broker's mean series has its count's labels
        if key not in end_means or key not in start_means:
            return math.nan
        served += end_count - start_count
        spent += end_means[key] * end_count - start_means[key] * start_count
    return spent / served if served > 0 else math.nan
