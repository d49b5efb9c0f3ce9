"""The one error type kperf shows its users as a single line, and the hint a misspelled name gets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class KperfError(Exception):
    """A problem the user can fix: bad input, a missing tool, a port in use.

    The CLI prints it as ``kperf: error: <message>`` and exits non-zero, so the
    message must name the cause in one line.
    """


class MeasurementFailed(KperfError):
    """A measurement that did not do what it was asked: a wait that ran out, a tool that failed.

    ``cause`` is the failure in a few stable words (no counts or ids), so that failures of one kind can be told
    apart from others (the study's breaker counts them by it); ``timed_out`` says whether a bounded wait ran out
    (such a unit is tried once more). The message, one line, says what happened with its numbers.
    """

    def __init__(self, message: str, cause: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.cause, self.timed_out = cause, timed_out

    def __reduce__(self) -> tuple[type[MeasurementFailed], tuple[str, str, bool]]:
        """Pickled whole: a load process's failure reaches the study intact (Python's default rebuilds an
        exception from its message alone, which this one's required ``cause`` refuses)."""
        return type(self), (str(self), self.cause, self.timed_out)


class UnitsFailed(MeasurementFailed):
    """An experiment whose units failed or that measured nothing, raised by a measuring notebook's last cell
    (:func:`kperf.study.failures.raise_if_failed`) once its tables and figures are shown.

    A class of its own because ``kperf study``, which executes those notebooks, tells it apart by name from a
    failure that stopped a notebook: these units are recorded as failed, so the study goes on past them and names
    them when it ends."""


def closest(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name nearest to a misspelled ``name``, or "" when none is near:
    a typo is then fixed from the message alone."""
    match = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {match[0]!r}?)" if match else ""
