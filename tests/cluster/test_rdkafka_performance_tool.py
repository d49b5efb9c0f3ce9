"""librdkafka's rdkafka_performance (built by `make rdkafka-perf`, as `make test` does) against a real cluster."""

from __future__ import annotations

import pytest

from kperf.drivers import rdkafka_performance
from kperf.drivers.consumer import consume
from kperf.drivers.specs import ConsumerSpec
from kperf.kafka import topics

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(rdkafka_performance.binary() is None, reason="rdkafka_performance not built (make rdkafka-perf)"),
]


def test_the_tool_writes_and_reads_back_what_it_reports(bootstrap: str) -> None:
    with topics.temporary(bootstrap, "rdperf", 3, 1) as topic:
        sent = rdkafka_performance.run("producer", bootstrap, topic, 20_000, 100)
        got = rdkafka_performance.run("consumer", bootstrap, topic, 20_000)
        python = consume(ConsumerSpec(bootstrap, topic, records=20_000))
    assert (sent.records, sent.bytes, sent.errors) == (20_000, 2_000_000, {}) and sent.seconds > 0
    assert (got.records, got.bytes) == (20_000, 2_000_000) and got.seconds > 0
    # kperf's consumer reads the tool's records, and does not take its header for a kperf identity.
    assert (python.records, python.bytes, python.verification) == (20_000, 2_000_000, None)
