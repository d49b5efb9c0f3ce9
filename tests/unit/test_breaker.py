from kperf.study.breaker import TRIPS_AFTER, Breaker


def test_closed_until_the_same_cause_fails_a_client_three_times():
    breaker = Breaker()
    for _ in range(TRIPS_AFTER - 1):
        breaker.failed("java", "e2e-latency timed out")
        assert breaker.open("java") is None
    breaker.failed("java", "e2e-latency timed out")
    assert breaker.open("java") == "not tried: 3 units of client java failed before it with 'e2e-latency timed out'"


def test_other_clients_and_causes_are_counted_apart():
    breaker = Breaker()
    for cause in ("consumer-perf failed", "e2e-latency timed out", "consumer-perf failed", "e2e-latency timed out"):
        breaker.failed("java", cause)
    for _ in range(TRIPS_AFTER):
        breaker.failed("python", "no group formed")
    assert breaker.open("java") is None
    assert breaker.open("python") is not None


def test_a_unit_that_ran_starts_its_client_count_again():
    breaker = Breaker()
    for _ in range(TRIPS_AFTER - 1):
        breaker.failed("java", "consumer-perf failed")
    breaker.ran("java")
    breaker.failed("java", "consumer-perf failed")
    assert breaker.open("java") is None


def test_the_bound_is_a_setting():
    breaker = Breaker(trips_after=1)
    breaker.failed("python", "no group formed")
    assert breaker.open("python") == "not tried: 1 units of client python failed before it with 'no group formed'"
