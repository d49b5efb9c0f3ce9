"""What a share consumer answers each record it is delivered: accept it, release it (delivered again later) or reject
it (archived, never delivered again), drawn from the record's identity, so every run of a point answers the same
records the same way and a point's shares of releases and rejects are exact over its records, not luck.

Only a first delivery is released or rejected: a released record is accepted when it comes back, so a release share
``r`` costs about ``r`` extra deliveries a record, and every record ends acknowledged or archived, which the tally
(:mod:`kperf.drivers.share_tally`) verifies by sequence.
"""

from __future__ import annotations

import numpy as np

# Kafka's AcknowledgeType (confluent_kafka.AcknowledgeType has the same values).
ACCEPT, RELEASE, REJECT = 1, 2, 3
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # splitmix64's constants: a fixed, well-mixed hash of the identity
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def uniform(producers: np.ndarray, sequences: np.ndarray) -> np.ndarray:
    """A number in [0, 1) per record, the same for the same (producer, sequence) on any host (splitmix64)."""
    with np.errstate(over="ignore"):
        z = (producers.astype(np.uint64) << np.uint64(40)) ^ sequences.astype(np.uint64)
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def answers(producers: np.ndarray, sequences: np.ndarray, deliveries: np.ndarray, release: float,
            reject: float) -> np.ndarray:
    """Each record's answer (ACCEPT, RELEASE or REJECT) given its delivery count (1: its first)."""
    drawn = uniform(producers, sequences)
    first = deliveries == 1
    out = np.full(len(drawn), ACCEPT, dtype=np.int8)
    out[first & (drawn < reject)] = REJECT
    out[first & (drawn >= reject) & (drawn < reject + release)] = RELEASE
    return out
