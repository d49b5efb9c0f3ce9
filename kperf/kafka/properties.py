"""Java .properties files: what Kafka's broker and tools read their settings from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def java_value(value: Any) -> str:
    """A setting as Java reads it: booleans lower-case, everything else as text."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def write(path: Path, config: Mapping[str, Any], private: bool = False) -> Path:
    """``config`` as a Java .properties file (read as ISO-8859-1, so other characters are \\u-escaped).

    ``private`` files (they hold passwords or keys) are readable by their owner only, before anything is written.
    """
    lines = [f"{escape(str(k), key=True)}={escape(java_value(v))}" for k, v in config.items()]
    if private:
        path.touch(mode=0o600)
        path.chmod(0o600)
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def escape(text: str, key: bool = False) -> str:
    """``text`` as Java reads it back: separators escaped in a key, leading blanks in a value (a JAAS line stays
    readable), control and non-ASCII characters everywhere."""
    specials = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}
    out = []
    for i, ch in enumerate(text):
        if ch in specials:
            out.append(specials[ch])
        elif (key and ch in "=: #!") or (ch == " " and (key or i == 0)):
            out.append("\\" + ch)
        elif ord(ch) > 126 or ord(ch) < 32:
            units = ch.encode("utf-16-be")
            out.extend(f"\\u{units[j]:02x}{units[j + 1]:02x}" for j in range(0, len(units), 2))
        else:
            out.append(ch)
    return "".join(out)


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def read(path: Path) -> dict[str, str]:
    """A Java .properties file as Java reads it: comments, continued lines, ``=``/``:``/space separators, escapes."""
    config = {}
    for line in _logical_lines(path.read_text(encoding="latin-1")):
        end = 0
        while end < len(line) and line[end] not in "=: \t\f":
            end += 2 if line[end] == "\\" else 1
        rest = line[end:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        config[unescape(line[:end])] = unescape(rest)
    return config


def _logical_lines(text: str) -> list[str]:
    """Non-comment lines, with lines ending in an odd number of backslashes joined to the next."""
    lines, pending = [], None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None and (not line or line[0] in "#!"):
            continue
        joined = line if pending is None else pending + line
        if (len(joined) - len(joined.rstrip("\\"))) % 2:
            pending = joined[:-1]
            continue
        lines.append(joined)
        pending = None
    if pending is not None:
        lines.append(pending)
    return lines


def unescape(text: str) -> str:
    """Java's escapes: \\uXXXX, \\n, \\t, ...; any other escaped character stands for itself."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if len(code) == 5:
            return chr(int(code[1:], 16))
        return {"n": "\n", "r": "\r", "t": "\t", "f": "\f"}.get(code, code)
    return _ESCAPE.sub(one, text)
