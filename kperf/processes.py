"""Child processes that die with their parent: a killed study, kernel or worker leaves nothing running."""

from __future__ import annotations

import ctypes
import os
import signal

import psutil

STUDY_PID = "KPERF_STUDY_PID"  # set by the study for the notebook kernels it starts


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies (Linux; a preexec_fn for children)."""
    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, sig)


def die_with_study() -> None:
    """In a notebook kernel started by ``kperf study``: die (SIGKILL) with the study.

    A study killed outright (kill -9) must not leave its kernel measuring on
    and writing results that a resumed run would then measure again.
    """
    if os.environ.get(STUDY_PID) == str(os.getppid()):
        die_with_parent(signal.SIGKILL)


def recorded(pid: int | None, create_time: float | None) -> psutil.Process | None:
    """The running process a state file names by pid and start time, or None: never another process that reused
    the pid, nor a zombie left for its parent to reap."""
    if pid is None:
        return None
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - (create_time or 0)) > 0.01 or proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except psutil.NoSuchProcess:
        return None
