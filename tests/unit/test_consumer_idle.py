"""When a consumer has waited long enough for more records (kperf.drivers.consumer._idle): a table of cases."""

from __future__ import annotations

import pytest

from kperf.drivers.consumer import FIRST_RECORD_TIMEOUT_S, _idle
from kperf.drivers.specs import ConsumerSpec
from kperf.errors import KperfError

JOINED = 100.0


def spec(**given: object) -> ConsumerSpec:
    return ConsumerSpec("127.0.0.1:9092", "t", idle_timeout_s=3.0, join_timeout_s=60.0, **given)  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "now", "last", "live", "moved", "idle"), [
    ({}, JOINED + 3.5, JOINED + 0.4, None, None, True),  # 3.1 s since its last record
    ({}, JOINED + 3.3, JOINED + 0.4, None, None, False),
    ({}, JOINED + FIRST_RECORD_TIMEOUT_S + 0.1, None, None, None, True),  # no record at all: the first-record bound
    ({"end_to_end": True}, JOINED + 3.5, JOINED + 0.4, None, None, False),  # a backlog read is no sign the producers are done
    ({"end_to_end": True}, JOINED + 9.0, JOINED + 0.4, JOINED + 5.0, None, True),
    # The producers' time: no silence counts before it is up, however long; after it, the idle time-out again.
    ({"sending_s": 20.0}, JOINED + 15.0, JOINED + 1.0, None, None, False),
    ({"sending_s": 20.0}, JOINED + 19.9, None, None, None, False),
    ({"sending_s": 20.0}, JOINED + 20.5, JOINED + 1.0, None, None, True),
    ({"sending_s": 20.0}, JOINED + 20.5, JOINED + 19.0, None, None, False),
    ({"sending_s": 20.0, "end_to_end": True}, JOINED + 24.0, JOINED + 20.9, JOINED + 20.9, None, True),
    # A member that read nothing while its peers read: idle with them, from the group's last growth (or its join).
    ({}, JOINED + 3.5, None, None, JOINED + 0.4, True),
    ({}, JOINED + 3.5, None, None, JOINED + 1.0, False),
    ({}, JOINED + 3.5, None, None, JOINED - 10.0, True),  # its peers read before it joined: from its join
    ({}, JOINED + 2.9, None, None, JOINED - 10.0, False),
    ({"end_to_end": True}, JOINED + 5.0, None, None, JOINED + 0.4, False),  # an end-to-end reader waits for its own
    ({"sending_s": 20.0}, JOINED + 19.9, None, None, JOINED + 1.0, False),  # not while the producers may send
])
def test_idle(given: dict[str, object], now: float, last: float | None, live: float | None, moved: float | None,
              idle: bool) -> None:
    assert _idle(spec(**given), now, JOINED, last, live, moved) is idle


@pytest.mark.parametrize("sending_s", [-1.0, float("inf"), float("nan")])
def test_a_sending_time_no_reader_could_wait_out_is_refused(sending_s: float) -> None:
    with pytest.raises(KperfError, match="the producers' sending time must be zero or more finite seconds"):
        spec(sending_s=sending_s).check()
