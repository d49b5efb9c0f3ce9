"""A run observed: the CPU and memory it used, the brokers' own view meanwhile, and the bytes it left on disk.

Whatever runs the load (a point of an experiment, a capacity phase, ``kperf produce``), its measurements get the
same figures beside them: :func:`measured_with_resources` wraps the run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace

from kperf.drivers import resources
from kperf.kafka import broker_metrics
from kperf.kafka.target import Target
from kperf.results import Measurement
from kperf.series_building import with_resources


def measured_with_resources(
    target: Target, topics: Sequence[str], window_s: float, run: Callable[[], list[Measurement]],
) -> list[Measurement]:
    """``run()``'s measurements with the CPU and memory used meanwhile (over the whole run, and window by window in
    their series), the brokers' own view of the same time where it is readable (``target.metrics``) and, on the
    local cluster, the bytes on disk of the ``topics`` it wrote."""
    before = target.metrics.scrape() if target.metrics is not None else None
    with resources.local_sampler(target.local, [os.getpid()], resources.interval_for(window_s)) as sampler:
        measured = run()
    after = target.metrics.scrape() if target.metrics is not None else None
    view = broker_metrics.between(before, after) if before is not None and after is not None else {}
    usage, samples = sampler.summary(), sampler.samples()
    if target.local is not None:
        usage["topic_disk_bytes"] = sum(resources.topic_disk_bytes(target.local, topic) for topic in topics)
    # Load processes on Dask workers sampled themselves there (kperf.drivers.load_hosts): their figures replace this
    # host's, whose windows (this process alone, idle) would then say nothing of them.
    return [replace(m, resources={**usage, **m.resources}, broker=view,
                    series=m.series and with_resources(m.series, [replace(s, values={k: v for k, v in s.values.items()
                                                                                     if k not in m.resources})
                                                                  for s in samples]))
            for m in measured]
