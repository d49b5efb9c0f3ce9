"""A C latency recorder (recorder.c) read from Python: its counts become the same encoded HdrHistogram as
:class:`kperf.drivers.latency.Recorder` gives for the same latencies, and its window the same bins as
:func:`kperf.latency_bins.to_bins`, so the native loops' series and histograms merge with the Python loops'.

The C keeps counts, not latencies: per value rounded as ``Recorder.flush`` rounds them (four significant digits of
microseconds) and, windowed, per bin. Recording each distinct value with its count is what ``Recorder.flush`` does
with a buffer of them, so the histogram's counts, and its encoding, are the same.
"""

from __future__ import annotations

import ctypes

import numpy as np

from kperf.drivers.latency import new_histogram
from kperf.latency_bins import Bins


class NativeRecorder:
    """A recorder of a loop's (or a test's: ``owned``, freed with this object) in the library ``lib``."""

    def __init__(self, lib: ctypes.CDLL, handle: int, owned: bool = False) -> None:
        self._lib, self._handle, self._owned = lib, handle, owned

    @classmethod
    def new(cls, lib: ctypes.CDLL, windowed: bool) -> NativeRecorder:
        """A recorder of its own (what the tests hold to the Python one)."""
        handle = lib.kp_recorder_new(int(windowed))
        if not handle:
            raise MemoryError("no memory for a latency recorder")
        return cls(lib, handle, owned=True)

    def add(self, seconds: float) -> None:
        self._lib.kp_recorder_add(self._handle, seconds)

    def encode(self) -> bytes:
        """Every latency recorded, as :meth:`kperf.drivers.latency.Recorder.encode` encodes them."""
        most = self._lib.kp_recorder_limits(0)
        values, counts = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.uint64)
        found = self._lib.kp_recorder_values(self._handle, values.ctypes.data, counts.ctypes.data, most)
        histogram = new_histogram()
        for value, count in zip(values[:found].tolist(), counts[:found].tolist()):
            histogram.record_value(value, count)
        encoded: bytes = histogram.encode()
        return encoded

    def window_bins(self) -> Bins:
        """The latencies since the last call, as :func:`kperf.latency_bins.to_bins` bins them, and forgotten; ()
        for a recorder without a window."""
        most = self._lib.kp_recorder_limits(1)
        bins, counts = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.uint64)
        found = self._lib.kp_recorder_take_bins(self._handle, bins.ctypes.data, counts.ctypes.data, most)
        return tuple(zip(bins[:found].tolist(), counts[:found].tolist()))

    def __del__(self) -> None:
        if self._owned:
            self._lib.kp_recorder_free(self._handle)
