import pickle

from kperf.errors import MeasurementFailed


def test_a_measurement_failure_crosses_processes_whole():
    # Load runs in spawned processes: their failure comes back pickled, cause and time-out included.
    back = pickle.loads(pickle.dumps(MeasurementFailed("EndToEndLatency failed: poll() timed out", "e2e", True)))
    assert (type(back), str(back), back.cause, back.timed_out) == (MeasurementFailed, "EndToEndLatency failed: poll() timed out", "e2e", True)
