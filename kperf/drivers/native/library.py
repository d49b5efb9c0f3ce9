"""The native loops' library: found in the cache (``make native`` builds it there), loaded with ctypes, its C API
declared (loops.h), and the librdkafka it loads checked against the header it was compiled with.

ctypes, not a CPython extension: building needs only gcc and no Python headers, and ctypes releases the GIL for
every call, so a loop runs a whole window in C. The confluent-kafka wheel ships librdkafka without its header; the
header comes from the closest release a registry serves (Makefile), so the two versions are checked when the
library loads (a different major version is refused) and recorded (:func:`versions`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from kperf.errors import KperfError, MeasurementFailed
from kperf.paths import cache_dir

LIBRARY = "libkperf_loops.so"
MAKE_TARGET = "make native"
ERRSTR = 512  # bytes for librdkafka's error strings
RD_KAFKA_CONF_OK = 0
ERROR_CODES = 512  # loops.h's KP_ERR_CODES: error codes a loop counts, at most

_P, _SIZE, _INT, _U32, _U64, _F64, _STR = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint32,
                                          ctypes.c_uint64, ctypes.c_double, ctypes.c_char_p)
# Every function Python calls: (result, arguments), as loops.h and rdkafka.h declare them. Buffers are void
# pointers to numpy arrays; a handle is a void pointer.
API: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "rd_kafka_version": (_INT, ()),
    "rd_kafka_err2name": (_STR, (_INT,)),
    "rd_kafka_conf_new": (_P, ()),
    "rd_kafka_conf_set": (_INT, (_P, _STR, _STR, _P, _SIZE)),
    "rd_kafka_conf_destroy": (None, (_P,)),
    "kp_header_version": (_INT, ()),
    "kp_failure_message": (_STR, (_P,)),
    "kp_failure_cause": (_STR, (_P,)),
    "kp_errors": (_SIZE, (_P, _P, _P, _SIZE)),
    "kp_recorder_new": (_P, (_INT,)),
    "kp_recorder_free": (None, (_P,)),
    "kp_recorder_add": (None, (_P, _F64)),
    "kp_recorder_values": (_SIZE, (_P, _P, _P, _SIZE)),
    "kp_recorder_take_bins": (_SIZE, (_P, _P, _P, _SIZE)),
    "kp_recorder_limits": (_SIZE, (_INT,)),
    "kp_ledger_new": (_P, ()),
    "kp_ledger_free": (None, (_P,)),
    "kp_ledger_add": (_INT, (_P, _U32, _U64)),
    "kp_ledger_producers": (_SIZE, (_P,)),
    "kp_ledger_bits": (_P, (_P, _SIZE, ctypes.POINTER(_U32), ctypes.POINTER(_SIZE))),
    "kp_ledger_duplicated": (_U64, (_P,)),
    "kp_producer_new": (_P, (_P, _STR, _U32, _F64, _F64, _INT, _INT, _INT, _P, _SIZE)),
    "kp_producer_pool": (_INT, (_P, _P, _SIZE, _P, _SIZE)),
    "kp_producer_lines": (_INT, (_P, _P, _P, _SIZE, _P, _SIZE)),
    "kp_producer_keys": (_INT, (_P, _P, _P, _SIZE, _P, _SIZE)),
    "kp_producer_warm_up": (_INT, (_P, _U64, _F64)),
    "kp_producer_warmed": (_U64, (_P,)),
    "kp_producer_flush": (_INT, (_P, _F64)),
    "kp_producer_start": (_INT, (_P, _F64)),
    "kp_producer_transactions": (_INT, (_P, _U64, _F64, _F64, _F64)),
    "kp_producer_transactions_tally": (None, (_P, _P, ctypes.POINTER(_F64))),
    "kp_producer_run": (_INT, (_P, _F64, _F64, _F64)),
    "kp_producer_sent": (_U64, (_P,)),
    "kp_producer_counts": (None, (_P, _P)),
    "kp_producer_recorder": (_P, (_P, _INT)),
    "kp_producer_acks": (_SIZE, (_P, ctypes.POINTER(_P))),
    "kp_producer_close": (None, (_P,)),
    "kp_producer_free": (None, (_P,)),
    "kp_consumer_new": (_P, (_P, _STR, _INT, _SIZE, _F64, _P, _SIZE)),
    "kp_consumer_subscribe": (_INT, (_P,)),
    "kp_consumer_read": (_INT, (_P, _F64, _F64)),
    "kp_consumer_consumed": (_P, (_P,)),
    "kp_consumer_ledger": (_P, (_P,)),
    "kp_consumer_recorder": (_P, (_P,)),
    "kp_consumer_close": (_INT, (_P,)),
    "kp_consumer_free": (None, (_P,)),
}


@dataclass(frozen=True)
class _Loaded:
    """The library at one path: loaded, or why not; and the librdkafka versions it was built with and loads."""

    lib: ctypes.CDLL | None
    missing: str | None
    versions: dict[str, str] = field(default_factory=dict)


def path() -> Path:
    """Where ``make native`` puts the library (the cache folder, as ``make rdkafka-perf`` does its tool)."""
    return cache_dir() / "native" / LIBRARY


def available() -> str | None:
    """None when the native loops can run here, else the reason in one line (the Python loops run instead)."""
    return _load(path()).missing


def load() -> ctypes.CDLL:
    """The library, its API declared; KperfError with the reason when it cannot be used."""
    loaded = _load(path())
    if loaded.lib is None:
        raise KperfError(loaded.missing)
    return loaded.lib


def versions() -> dict[str, str]:
    """The librdkafka the library loads and the one whose header it was compiled with (``librdkafka``,
    ``librdkafka_header``), e.g. 2.16.0 and 2.15.1; empty when it is not built."""
    return dict(_load(path()).versions)


@cache
def _load(file: Path) -> _Loaded:  # by path: KPERF_CACHE may point elsewhere later in the process
    if not file.is_file():
        return _Loaded(None, f"the native loops are not built: run '{MAKE_TARGET}' (needs gcc and npm)")
    try:
        lib = ctypes.CDLL(str(file))
        for name, (result, arguments) in API.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = result, arguments
    except (OSError, AttributeError) as exc:  # a broken build, a moved wheel, a library older than this code
        return _Loaded(None, f"the native loops in {file} cannot be loaded ({exc}): run '{MAKE_TARGET}' again")
    loads, header = _release(lib.rd_kafka_version()), _release(lib.kp_header_version())
    found = {"librdkafka": loads, "librdkafka_header": header}
    if loads.split(".")[0] != header.split(".")[0]:
        return _Loaded(None, f"the native loops were compiled with librdkafka {header}'s header but load librdkafka "
                             f"{loads}, another major version: run '{MAKE_TARGET}' again", found)
    return _Loaded(lib, None, found)


def _release(version: int) -> str:
    """librdkafka's hex version (0xMMmmrrpp) as major.minor.revision."""
    return f"{version >> 24 & 0xFF}.{version >> 16 & 0xFF}.{version >> 8 & 0xFF}"


def client_conf(lib: ctypes.CDLL, config: Mapping[str, Any], role: str) -> int:
    """A librdkafka configuration (``rd_kafka_conf_t``) of the settings confluent-kafka would get (its ``logger``
    left out: the C client discards librdkafka's log lines, as kperf does not print them), converted as
    confluent-kafka converts them; KperfError naming the setting librdkafka refuses."""
    conf = lib.rd_kafka_conf_new()
    errstr = ctypes.create_string_buffer(ERRSTR)
    for name, value in config.items():
        if name == "logger":
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        if lib.rd_kafka_conf_set(conf, name.encode(), text.encode(), errstr, ERRSTR) != RD_KAFKA_CONF_OK:
            lib.rd_kafka_conf_destroy(conf)
            raise KperfError(f"invalid {role} setting {name}: {errstr.value.decode(errors='replace')}")
    return int(conf)


def failure(lib: ctypes.CDLL, handle: int) -> MeasurementFailed:
    """What a loop failed on, as the unit's failure."""
    return MeasurementFailed(lib.kp_failure_message(handle).decode(errors="replace"),
                             lib.kp_failure_cause(handle).decode())


def errors(lib: ctypes.CDLL, handle: int) -> dict[str, int]:
    """The errors a loop counted, by librdkafka's name (``rd_kafka_err2name``, as confluent-kafka names them)."""
    codes, counts = (ctypes.c_int32 * ERROR_CODES)(), (ctypes.c_uint64 * ERROR_CODES)()
    found = lib.kp_errors(handle, codes, counts, ERROR_CODES)
    return {lib.rd_kafka_err2name(codes[i]).decode(): counts[i] for i in range(found)}
