"""The run folder's log, ``kperf.log``: what the study and its notebooks did, with timestamps.

The study process and each notebook kernel append to the same file, one line
per event (experiment started, unit recorded, topics cleaned up), so a run
can be followed (``tail -f``) and audited afterwards.
"""

from __future__ import annotations

import logging
from pathlib import Path

LOG_FILE = "kperf.log"
FORMAT = "%(asctime)s %(process)d %(levelname)s %(message)s"


def to_run_folder(run_dir: Path) -> logging.Logger:
    """kperf's logger, also writing to ``run_dir/kperf.log`` (once per process and folder)."""
    logger = logging.getLogger("kperf")
    logger.setLevel(logging.INFO)
    path = str((Path(run_dir) / LOG_FILE).resolve())
    if not any(isinstance(h, logging.FileHandler) and h.baseFilename == path for h in logger.handlers):
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(handler)
    return logger
