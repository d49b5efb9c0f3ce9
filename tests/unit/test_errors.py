import pickle

from kperf.errors import MeasurementFailed


def test_a_measurement_failure_crosses_processes_whole():
    # Load runs in spawned processes: their failure comes back pickled, cause and time-out included.
    message = "e2e-latency failed: poll() timed out"
    back = pickle.loads(pickle.dumps(MeasurementFailed(message, "e2e-latency timed out", True)))
    assert (type(back), str(back), back.cause, back.timed_out) == (MeasurementFailed, message, "e2e-latency timed out", True)
