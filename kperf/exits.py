"""Exit codes, one meaning each, the same for every command (the README's table lists them).

A pipeline can gate on them: 0 only when kperf measured what was asked and, for a command that judges
(``capacity``, ``compare``), the judgement passed.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # measured, and any verdict passed
    ERROR = 1  # nothing measured: bad input, no cluster, a missing tool (the one-line "kperf: error: ...")
    USAGE = 2  # the command line itself (argparse's own code)
    FAILED = 3  # a measurement failed: a unit, a run, a study with failed units (each named on stderr)
    WORSE = 4  # the verdict is no: capacity does not carry the workload; compare found a point worse
    UNDECIDED = 5  # no verdict: capacity's limit found only from above or held by the load generator; compare
    # could test no point
