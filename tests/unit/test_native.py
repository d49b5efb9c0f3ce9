"""The native loops' C parts against the Python ones they replace, through ctypes (no Kafka): the sequence ledger
(the same bits and duplicates) and the latency recorder (the same encoded histogram and window bins).

They need the library built: ``make native`` (``make test-unit`` builds it first); without it they fail, naming it.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from kperf.drivers import latency
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.native import library
from kperf.drivers.native.consumer_loop import read_ledger
from kperf.drivers.native.recorder import NativeRecorder
from kperf.latency_bins import to_bins
from kperf.results import Verification


@pytest.fixture(scope="module")
def lib() -> ctypes.CDLL:
    return library.load()  # KperfError "the native loops are not built: run 'make native' ..." when they are not


def c_ledger(lib: ctypes.CDLL, pairs: list[tuple[int, int]]) -> SequenceLedger:
    handle = lib.kp_ledger_new()
    try:
        for producer, sequence in pairs:
            assert lib.kp_ledger_add(handle, producer, sequence) == 0
        return read_ledger(lib, handle)
    finally:
        lib.kp_ledger_free(handle)


def test_the_ledger_catches_a_missing_and_a_duplicated_record(lib: ctypes.CDLL) -> None:
    pairs = [(7, s) for s in range(10) if s != 5] + [(7, 3)] + [(2**32 - 1, s) for s in range(4)]
    ledger = c_ledger(lib, pairs)
    assert ledger.verification({7: 10, 2**32 - 1: 4}) == Verification(expected=14, missing=1, duplicated=1)
    assert ledger.bits(7) == (1 << 10) - 1 - (1 << 5)


def test_the_ledger_keeps_the_bits_and_duplicates_of_the_python_one(lib: ctypes.CDLL) -> None:
    rng = np.random.default_rng(11)
    producers = rng.choice([3, 4, 2**31 + 5], 50_000)
    sequences = rng.integers(0, 40_000, 50_000)  # some drawn twice: duplicates
    python = SequenceLedger()
    for part in np.array_split(np.arange(len(sequences)), 9):  # batches, as the Python loop adds them
        python.add_many(producers[part], sequences[part])
    native = c_ledger(lib, list(zip(producers.tolist(), sequences.tolist())))
    assert native.duplicated == python.duplicated > 0
    assert sorted(native.seen) == sorted(python.seen)
    for producer in python.seen:
        assert native.bits(producer) == python.bits(producer)


def latencies() -> list[float]:
    """Log-uniform from 1 us to 100 s, and the edges: none, negative, exact powers of ten, multiples of each rounding
    step and the floats beside them, MAX_US and beyond (not measurements: values that exercise every branch of the
    rounding and binning)."""
    spread = (10.0 ** np.random.default_rng(5).uniform(-6, 2, 100_000)).tolist()
    powers = [10.0**k for k in range(-7, 4)]
    multiples = [m * 10.0**step / 1e6 for step in range(1, 6) for m in (1000, 1001, 1234, 5000, 9999)]
    beside = [np.nextafter(p, direction) for p in powers + multiples for direction in (0.0, np.inf)]
    edges = [0.0, -0.0, -1.0, -1e-9, 5e-7, latency.MAX_US / 1e6, 601.0, 1e4, 1e9, 1e300]
    return spread + powers + multiples + [float(b) for b in beside] + edges


def test_the_recorder_encodes_the_histogram_of_the_python_one(lib: ctypes.CDLL) -> None:
    python, native = latency.Recorder(), NativeRecorder.new(lib, windowed=False)
    for seconds in latencies():
        python.add(seconds)
        native.add(seconds)
    assert native.encode() == python.encode()
    assert native.window_bins() == ()  # no window kept without a series


def test_the_recorder_bins_a_window_as_to_bins_does_and_forgets_it(lib: ctypes.CDLL) -> None:
    values = latencies()
    native = NativeRecorder.new(lib, windowed=True)
    for seconds in values:
        native.add(seconds)
    assert native.window_bins() == to_bins(values)
    assert native.window_bins() == ()
    native.add(0.002)
    assert native.window_bins() == to_bins([0.002])


def test_an_empty_recorder_encodes_an_empty_histogram(lib: ctypes.CDLL) -> None:
    assert NativeRecorder.new(lib, windowed=True).encode() == latency.Recorder().encode()


def test_the_library_loads_librdkafka_of_its_headers_major_version(lib: ctypes.CDLL) -> None:
    found = library.versions()
    assert found["librdkafka"].split(".")[0] == found["librdkafka_header"].split(".")[0]
