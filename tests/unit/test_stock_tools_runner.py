from kperf.drivers.stock_tools_runner import failure

E2E_TIMED_OUT = """Exception in thread "main" java.lang.RuntimeException: poll() timed out before finding a result (timeout:[60000ms])
\tat org.apache.kafka.tools.EndToEndLatency.execute(EndToEndLatency.java:123)
\tat org.apache.kafka.tools.EndToEndLatency.main(EndToEndLatency.java:80)
"""
E2E_REFUSED = """Exception in thread "main" java.lang.IllegalArgumentException: Latency testing requires synchronous \
acknowledgement. Please use 1 or all
\tat org.apache.kafka.tools.EndToEndLatency.execute(EndToEndLatency.java:90)
"""


def test_a_tool_whose_own_wait_ran_out_timed_out():
    failed = failure("e2e-latency", 1, E2E_TIMED_OUT)
    assert (failed.cause, failed.timed_out) == ("e2e-latency timed out", True)
    assert str(failed) == ("e2e-latency failed (exit code 1): Exception in thread \"main\" java.lang.RuntimeException: "
                           "poll() timed out before finding a result (timeout:[60000ms])")


def test_any_other_exit_failed_with_a_stable_cause():
    failed = failure("e2e-latency", 1, E2E_REFUSED)
    assert (failed.cause, failed.timed_out) == ("e2e-latency failed", False)
    assert "requires synchronous acknowledgement" in str(failed) and "\n" not in str(failed)
