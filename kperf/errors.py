"""The one error type kperf shows its users as a single line."""


class KperfError(Exception):
    """A problem the user can fix: bad input, a missing tool, a port in use.

    The CLI prints it as ``kperf: error: <message>`` and exits non-zero, so the
    message must name the cause in one line.
    """
