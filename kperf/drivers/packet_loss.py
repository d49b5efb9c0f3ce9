"""A share of the TCP packets to and from one port of this host dropped by the kernel (an nftables rule with random
numbers: this kernel has no netem), through the helper `make lossy` builds (tools/lossy). Changing netfilter needs
root: without it, or without the helper, a loss fault is refused in one line before any load."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kperf.errors import KperfError
from kperf.paths import cache_dir

TIMEOUT_S = 10.0  # the helper's one netlink exchange


def helper_path() -> Path:
    return cache_dir() / "lossy" / "lossy"


def require_usable(euid: int | None = None) -> None:
    """Refuse a loss fault this process cannot apply: the helper not built, or not root (``euid``: this one's)."""
    if not helper_path().is_file():
        raise KperfError(f"a loss fault needs kperf's helper at {helper_path()}: run 'make lossy' (it needs Go)")
    if (os.geteuid() if euid is None else euid) != 0:
        raise KperfError("a loss fault changes the kernel's packet filter, which needs root: run kperf as root, "
                         "or name a command fault that drops packets on the broker's host")


def _helper(*args: str) -> str:
    try:
        done = subprocess.run([str(helper_path()), *args], capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise KperfError(f"kperf's loss helper did not answer within {TIMEOUT_S:g} s ({' '.join(args)})") from None
    except OSError as exc:
        raise KperfError(f"kperf's loss helper {helper_path()} could not run: {exc.strerror}") from None
    if done.returncode != 0:
        raise KperfError(f"kperf's loss helper failed ({' '.join(args)}): {done.stderr.strip()}")
    return done.stdout


def drop(port: int, loss_pct: float) -> None:
    """Drop ``loss_pct`` % (to the nearest 0.1 %, 0.1 to 99.9: kperf.load.Fault checks it) of the TCP packets to and
    from ``port``, replacing an earlier rule."""
    _helper("add", str(port), str(min(999, max(1, round(loss_pct * 10)))))


def restore(port: int) -> None:
    """No packet of ``port`` dropped any more (none was: fine)."""
    _helper("remove", str(port))


def dropping() -> list[int]:
    """The ports whose packets a kperf rule drops now."""
    return [int(p) for p in _helper("list").split()]
