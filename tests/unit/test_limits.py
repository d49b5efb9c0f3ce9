"""What limited a point, from its record: each rule on a row that should hit it, and the order between them."""

from __future__ import annotations

import pytest

from kperf import limits

LOCAL = {"env.cluster": "local", "env.cpu_count": 2}


@pytest.mark.parametrize(
    ("row", "expected", "evidence"),
    [
        ({"role": "producer", "param.rate": 30_000, "records_per_s": 29_990, "res.client_cpu_pct_busiest": 99, **LOCAL},
         limits.RATE_CAP, "achieved 29,990 of the 30,000 records/s offered"),
        ({"role": "consumer", "param.rate": 2_000, "records_per_s": 1_990, **LOCAL},  # reading a paced producer
         limits.RATE_CAP, "achieved 1,990 of the 2,000"),
        ({"role": "producer", "param.rate": 30_000, "records_per_s": 20_000, "steady_records_per_s": 29_000,
          "steady_windows": 20, **LOCAL}, limits.RATE_CAP, "achieved 29,000"),  # the steady rate, not the whole run's, is judged
        ({"role": "producer", "param.rate": -1, "records_per_s": 9e4, "res.client_cpu_pct": 120,
          "res.client_cpu_pct_busiest": 97, "res.broker_cpu_pct": 90, **LOCAL},
         limits.LOAD_GENERATOR, "the busiest client process used 97% of a core"),
        ({"role": "consumer", "records_per_s": 9e4, "res.client_cpu_pct": 60, "res.client_cpu_pct_busiest": 60,
          "res.broker_cpu_pct": 110, **LOCAL}, limits.HOST_CPU, "the host's 2 cores were 85% busy: brokers 110%"),
        ({"role": "consumer", "records_per_s": 9e4, "res.client_cpu_pct": 60, "res.client_cpu_pct_busiest": 60,
          "res.broker_cpu_pct": 20, "res.host_cpu_pct": 190, **LOCAL}, limits.HOST_CPU,
         "the host's 2 cores were 95% busy"),  # someone else's processes count: they competed too
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 99, "res.client_cpu_pct_busiest": 99,
          "steady_res.client_cpu_pct": 50, "steady_res.client_cpu_pct_busiest": 50, "steady_res.host_cpu_pct": 60,
          **LOCAL}, limits.NONE_FOUND, "clients 50%"),  # the steady windows are judged, not the whole run
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct_busiest": 40, "res.client_cpu_pct": 40,
          "res.host_cpu_pct": 700, "env.cluster": "external", "env.cpu_count": 8}, limits.LOAD_GENERATOR,
         "the load host's 8 cores were 88% busy"),
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct_busiest": 40, "res.client_cpu_pct": 40,
          "res.load_host_busy_pct": 92, "res.host_cpu_pct": 700, "env.load_hosts": "10.0.0.5,10.0.0.6",
          "env.cluster": "external", "env.cpu_count": 8}, limits.LOAD_GENERATOR,
         "the busiest load host's cores were 92% busy (of 10.0.0.5,10.0.0.6)"),  # Dask workers: their hosts, not this
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 40, "res.client_cpu_pct_busiest": 40,
          "res.load_host_busy_pct": 30, "res.host_cpu_pct": 700, "env.cluster": "external", "env.cpu_count": 8},
         limits.NONE_FOUND, "clients 40%"),  # this host, busy with something else, sent no load
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 40, "res.client_cpu_pct_busiest": 40,
          "res.host_cpu_pct": 60, "res.disk_busy_pct": 95, **LOCAL}, limits.DISK, "the busiest disk was busy 95%"),
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 40, "res.client_cpu_pct_busiest": 40,
          "res.host_cpu_pct": 60, "res.disk_busy_pct": 95, "res.net_busy_pct": 90, "env.cluster": "external",
          "env.cpu_count": 8}, limits.NETWORK, "the busiest network interface carried 90%"),  # remote disks unseen
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 10, "res.client_cpu_pct_busiest": 10,
          "res.broker_cpu_pct": 170, "env.cluster": "external", "env.cpu_count": 2}, limits.BROKER_CPU, "brokers 170%"),
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 50, "res.client_cpu_pct_busiest": 50,
          "env.cluster": "external", "env.cpu_count": 8}, limits.NONE_FOUND, "clients 50%, brokers unseen CPU"),
        ({"role": "producer", "records_per_s": 1.0}, limits.NONE_FOUND, "no CPU was sampled"),
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 40, "res.client_cpu_pct_busiest": 40,
          "res.host_cpu_pct": 300, "broker.handler_idle_pct": 12.0, "broker.network_idle_pct": 60.0,
          "env.cluster": "external", "env.cpu_count": 8}, limits.BROKER_THREADS,
         "the brokers' request handler threads were idle 12% of the time"),
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 35, "res.client_cpu_pct_busiest": 35,
          "res.broker_cpu_pct": 70, "broker.produce_total_ms": 2.6, "broker.produce_remote_ms": 1.8, **LOCAL},
         limits.REPLICATION, "no resource was saturated, and the brokers' produce requests spent 69% of their 2.6 ms"),
        ({"role": "producer", "param.rate": -1, "res.client_cpu_pct": 35, "res.client_cpu_pct_busiest": 35,
          "res.broker_cpu_pct": 70, "broker.produce_total_ms": 2.6, "broker.produce_remote_ms": 1.0, **LOCAL},
         limits.NONE_FOUND, "clients 35%"),  # replication the smaller part of a request's time
        ({"role": "consumer", "res.client_cpu_pct": 35, "res.client_cpu_pct_busiest": 35, "res.broker_cpu_pct": 70,
          "broker.produce_total_ms": 2.6, "broker.produce_remote_ms": 1.8, **LOCAL},
         limits.NONE_FOUND, "clients 35%"),  # a consumer does not wait on produce requests
        ({"role": "producer", "broker.produce_total_ms": 2.6, "broker.produce_remote_ms": 1.8},
         limits.NONE_FOUND, "no CPU was sampled"),  # nothing saturated is not known
        ({"role": "producer", "res.client_cpu_pct": 35, "res.client_cpu_pct_busiest": 35, "res.broker_cpu_pct": 70,
          "broker.produce_total_ms": 2.6, "broker.produce_remote_ms": 1.8, **LOCAL},
         limits.NONE_FOUND, "clients 35%"),  # not known unthrottled (capacity's trials: paced, the rate left out)
    ],
)
def test_each_rule_names_its_limit_with_the_numbers(row: dict, expected: str, evidence: str) -> None:
    found, why = limits.limit(row)
    assert found == expected and why.startswith(evidence)


def test_a_remote_clusters_host_is_not_judged_by_the_clients_host() -> None:
    row = {"role": "producer", "res.client_cpu_pct": 70, "res.client_cpu_pct_busiest": 70, "res.broker_cpu_pct": float("nan"),
           "env.cluster": "external", "env.cpu_count": 1}
    assert limits.limit(row)[0] == limits.NONE_FOUND


def test_every_limit_has_the_reports_words_and_they_quote_its_thresholds() -> None:
    names = [limits.LOAD_GENERATOR, limits.HOST_CPU, limits.BROKER_CPU, limits.BROKER_THREADS, limits.RATE_CAP,
             limits.DISK, limits.NETWORK, limits.REPLICATION, limits.NONE_FOUND]
    assert list(limits.WORDS) == names  # every limit, in the report's order
    assert f"used {limits.BUSY:.0%} or more of a core" in limits.WORDS[limits.LOAD_GENERATOR] == (
        "measure the load generator, not Kafka: a client process, whose sending or reading loop runs on one thread, "
        "used 80% or more of a core (or the load host's cores were full)")
    assert f"(idle {1 - limits.BUSY:.0%} or less)" in limits.WORDS[limits.BROKER_THREADS]
    assert f"(busy {limits.BUSY:.0%} or more of the time)" in limits.WORDS[limits.DISK]
    assert limits.WAITED == 0.5 and "spent half their time or more" in limits.WORDS[limits.REPLICATION]
