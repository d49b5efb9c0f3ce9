"""The local cluster's state file: each broker's metrics endpoint is kept, and older files still load."""

from __future__ import annotations

import json
from pathlib import Path

from kperf.kafka.cluster import STATE_FILE, Broker, ClusterState


def state(directory: Path, metrics_urls: list[str | None]) -> ClusterState:
    brokers = tuple(
        Broker(node_id=i + 1, port=9092 + i, controller_port=9192 + i, directory=directory / f"broker-{i + 1}",
               metrics_url=url)
        for i, url in enumerate(metrics_urls)
    )
    return ClusterState(directory=directory, kafka_version="4.3.1", kafka_source="maven", cluster_id="x",
                        brokers=brokers, broker_config={}, detached=True)


def test_metrics_urls_are_saved_and_loaded(tmp_path: Path) -> None:
    urls = ["http://127.0.0.1:40001/metrics", "http://127.0.0.1:40002/metrics"]
    state(tmp_path, list(urls)).save()
    loaded = ClusterState.load(tmp_path)
    assert loaded is not None and loaded.metrics_urls == urls


def test_a_state_file_from_before_the_exporter_loads_without_endpoints(tmp_path: Path) -> None:
    state(tmp_path, ["http://127.0.0.1:40001/metrics"]).save()
    raw = json.loads((tmp_path / STATE_FILE).read_text())
    for broker in raw["brokers"]:
        del broker["metrics_url"]
    (tmp_path / STATE_FILE).write_text(json.dumps(raw))
    loaded = ClusterState.load(tmp_path)
    assert loaded is not None and loaded.brokers[0].metrics_url is None and loaded.metrics_urls == []


def test_endpoints_are_all_or_none(tmp_path: Path) -> None:
    assert state(tmp_path, ["http://127.0.0.1:40001/metrics", None]).metrics_urls == []
