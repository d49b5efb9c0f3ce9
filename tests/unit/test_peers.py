"""Each peer's sizing rule against a worked example its source publishes (read in stored copies of the sources)."""

from __future__ import annotations

import pytest

from kperf.sizing import peers


def test_msk_write_io_is_ingress_times_rf() -> None:
    # AWS's MSK sizing guide (the agent-toolkit reference, AWS-authored): "For RF=3 and 100 MBps ingress,
    # total write IO = 300 MBps across the cluster."
    assert peers.msk_write_io(100, 3) == 300
    # "a broker with RF=3 and 83 MiB/s client ingress already hits the 250 MiB/s ceiling (83 x 3 = 249 MiB/s)"
    assert peers.msk_write_io(83, 3) == 249
    one = peers.msk(peers.Asked(83, 0, 3, 3, 0, 8, 250, 10_000))
    assert one.lines[0].value == pytest.approx(249 / 250)  # one broker's worth of storage throughput, just under


def test_msk_brokers_are_a_multiple_of_the_zones() -> None:
    # The same guide's Express example: "500/125 = 4 brokers minimum -> round up to 6 brokers (next multiple of 3)".
    assert peers.round_up_to(500 / 125, 3) == 6
    assert peers.round_up_to(3.0, 3) == 3 and peers.round_up_to(0.2, 3) == 3


def test_msk_partition_caps_follow_its_table() -> None:
    # MSK best practices: m5.large/xlarge (2/4 vCPU) 1000, m5.2xlarge (8) 2000, m5.4xlarge and up (16+) 4000.
    assert [peers.msk_partitions_per_broker(c) for c in (2, 4, 8, 16, 96)] == [1000, 1000, 2000, 4000, 4000]


def test_google_sizing_steps() -> None:
    # Google publishes the steps but no worked example: these are its steps on a third-party example that
    # cites its page (0.6 MBps produced and consumed, 3 replicas): write 1.8, read 0.6 + 0.6 x 2 = 1.8,
    # write-equivalent 1.8 + 1.8 / 4 = 2.25 MBps; ceiling(2.25 / 20 / 0.5) = 1 vCPU, raised to the minimum of 3.
    assert peers.google_write_equivalent(0.6, 0.6, 3) == pytest.approx(2.25)
    assert peers.google_vcpus(2.25) == 3
    answer = peers.google(peers.Asked(0.6, 1, 3, 3, 0, 4, 250, 1000))
    assert answer.lines[2].value == 12  # 3 vCPUs x 4 GiB
    # Past the minimum: 100 MB/s in, one group, rf 3: 300 + (100 + 200) / 4 = 375; 375 / 20 / 0.5 = 37.5 -> 38.
    assert peers.google_vcpus(peers.google_write_equivalent(100, 100, 3)) == 38


def test_redpanda_network_and_memory_examples() -> None:
    # Redpanda's medium-throughput example: 500 MB/s produced, 1,000 MB/s consumed, RF 3 "equates to
    # 2,500 MB/sec".
    assert peers.redpanda_network(500, 1000, 3) == 2500
    # "10,000 partitions x 3 replicas x 2 MB = 60,000 MB (60 GB) ... evenly distributed across three brokers,
    # each broker needs at least 20 GB" (the partitions' share, beside 2 GB per core).
    assert peers.redpanda_memory_gb(10_000, 3, 3, cores=0) == pytest.approx(20)


def test_redpanda_low_throughput_storage() -> None:
    # Redpanda's low-throughput example: 75 MB/s for 3 days on three nodes at RF 3, "each node needs at least
    # 20 TB" (its own figures round loosely: 75 MB/s x 86,400 s x 3 days is 19.44 TB a node).
    per_node = peers.storage_bytes(75e6 * 86_400, 3, 3) / 3
    assert 19e12 < per_node <= 20e12


def test_storage_rule_with_compression() -> None:
    # Falcon LogScale's storage rule, the same formula with compression: "20TB/day, default replication of 3 and
    # 30 days retention: ((20*30)/10)*3 ... approximately 180TB".
    assert peers.storage_bytes(20e12, 30, 3, compression=10) == pytest.approx(180e12)
    # AWS's guide adds 20% headroom.
    assert peers.storage_bytes(1, 1, 1, margin=0.2) == pytest.approx(1.2)


def test_partitions_rule() -> None:
    # max(t/p, t/c), in Confluent's example (as quoted from its "5 common pitfalls" post): 250 MB/s, 50 MB/s a
    # partition producing and 25 consuming: max(5, 10) = 10 partitions.
    assert peers.partitions_needed(250, 50, 25) == 10
    assert peers.partitions_needed(250, 50, 250) == 5


def test_every_rule_names_its_source() -> None:
    asked = peers.Asked(50, 2, 3, 30, 7 * 86_400, 8, 250, 1250)
    for answer in (peers.msk(asked), peers.google(asked), peers.redpanda(asked)):
        assert answer.source.startswith("https://") and answer.brokers is not None and answer.brokers >= 3
        assert all(line.formula for line in answer.lines)
