"""The study's calibration path on a real cluster: a unit that ran too briefly to give a rate is measured again,
larger (kperf.study.calibration), and its record and the run's log say so."""

from __future__ import annotations

import re
from pathlib import Path

from kperf.kafka import target
from kperf.results import FAILED
from kperf.study import calibration, profiles, sweep
from kperf.study.logs import LOG_FILE

# 5,000 records of 100 bytes: one producer sends them in a few hundredths of a second, far below the 1 s and two
# windows a rate needs (kperf.validity), on any host; grown up to MAX_SCALE times, 5 million, they give a second or
# more to any producer slower than 5 million records a second.
PLANNED = 5_000
GROWN = re.compile(r"replication\.factor=1 acks=1 \[python\] ran too briefly to give a rate \(.+\): "
                   r"measuring it with ([\d,]+) records")


def test_a_unit_too_short_for_a_rate_is_measured_again_larger_and_the_log_says_so(tmp_path: Path,
                                                                                  bootstrap: str) -> None:
    settings = profiles.parameters("replication", "smoke", clients=["python"], replication_factors=[1],
                                   acks_values=["1"], records=PLANNED)
    with target.connect(bootstrap) as cluster:
        records = sweep.run("replication", cluster, tmp_path / "calibrated", settings)
    (row,) = records.to_dict("records")  # one unit, one record: the short runs before it are not recorded
    sizes = [int(n.replace(",", "")) for n in GROWN.findall((tmp_path / "calibrated" / LOG_FILE).read_text())]
    assert 1 <= len(sizes) <= calibration.ROUNDS, sizes  # measured again, at most ROUNDS more times
    assert sizes == sorted(sizes) and sizes[0] > PLANNED  # each time larger
    assert row["param.records"] == row["records"] == sizes[-1]  # the record is the last, largest run's, in full
    assert not row[FAILED] and row["records_per_s"] > 0, row[FAILED]  # and it gave a rate
