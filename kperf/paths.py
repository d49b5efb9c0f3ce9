"""Where kperf keeps results and downloads.

In a checkout (the usual case: ``make study``) everything lives beside the
code: results under ``data/``, Kafka jars under ``.cache/``. ``KPERF_DATA`` and
``KPERF_CACHE`` move them, e.g. for tests or a shared disk.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path | None:
    """The checkout this package sits in, or None when installed elsewhere."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir() else None


def data_dir() -> Path:
    """The folder for results, run folders and local cluster data."""
    if "KPERF_DATA" in os.environ:
        return Path(os.environ["KPERF_DATA"]).resolve()
    root = project_root()
    return (root / "data") if root else Path.cwd() / "data"


def cache_dir() -> Path:
    """The folder for downloaded Kafka jars (git-ignored, safe to delete)."""
    if "KPERF_CACHE" in os.environ:
        return Path(os.environ["KPERF_CACHE"]).resolve()
    root = project_root()
    return (root / ".cache") if root else Path.home() / ".cache" / "kperf"


def notebooks_dir() -> Path:
    """The experiment and report notebooks ``kperf study`` executes."""
    if "KPERF_NOTEBOOKS" in os.environ:
        return Path(os.environ["KPERF_NOTEBOOKS"]).resolve()
    root = project_root()
    return (root / "notebooks") if root else Path.cwd() / "notebooks"
