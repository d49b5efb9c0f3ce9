"""Java .properties files: what Kafka's broker and tools read their settings from."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def java_value(value: Any) -> str:
    """A setting as Java reads it: booleans lower-case, everything else as text."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def write(path: Path, config: Mapping[str, Any]) -> Path:
    """``config`` as a Java .properties file (read as ISO-8859-1, so other characters are \\u-escaped)."""
    lines = [f"{escape(str(k))}={escape(java_value(v))}" for k, v in config.items()]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def escape(text: str) -> str:
    specials = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}
    out = []
    for ch in text:
        if ch in specials:
            out.append(specials[ch])
        elif ch in "=: #!":
            out.append("\\" + ch)
        elif ord(ch) > 126 or ord(ch) < 32:
            units = ch.encode("utf-16-be")
            out.extend(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))
        else:
            out.append(ch)
    return "".join(out)
