"""The dependency lock: whether it matches pyproject.toml, and its fingerprint.

``make lock`` resolves pyproject.toml's dependencies into ``requirements.lock``
(every package at an exact version, with hashes) and its build backend into
``build.lock``; every other command installs exactly those. Resolution is
uv's (``uv pip compile``): the lock is plain pip format, so pip and conda can
install it too.

This module is standard library only, because the Makefile runs it with the
system Python before the virtual env exists: ``python3 -m kperf.lockfile
check`` refuses a lock whose inputs changed since it was made, naming the
command that refreshes it. The study records :func:`fingerprint` with every
run, so two runs can be compared knowing whether their software matched.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from pathlib import Path

LOCK = "requirements.lock"
BUILD_LOCK = "build.lock"
REFRESH = "make lock"
INSTALLED_STAMP = ".installed"  # in the virtual env: the sha256 of the lock `make` installed
_INPUTS_MARK = "# inputs-sha256: "


def inputs_digest(pyproject: Path) -> str:
    """sha256 of what the lock is resolved from: dependencies, extras, Python
    range, build backend and the packages left out (other edits of pyproject.toml do not stale it)."""
    data = tomllib.loads(pyproject.read_text())
    project = data.get("project", {})
    inputs = {
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
        "requires-python": project.get("requires-python"),
        "build-system": data.get("build-system", {}).get("requires", []),
    }
    excluded = data.get("tool", {}).get("uv", {}).get("exclude-dependencies")
    if excluded:  # only when set: a lock made before there was any stays current
        inputs["exclude-dependencies"] = excluded
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def recorded_digest(lock: Path) -> str | None:
    """The inputs digest ``make lock`` wrote into the lock, if any."""
    for line in lock.read_text().splitlines():
        if line.startswith(_INPUTS_MARK):
            return line.removeprefix(_INPUTS_MARK).strip()
    return None


def stamp(root: Path) -> None:
    """Write the current inputs digest into the freshly compiled lock."""
    lock = root / LOCK
    lines = [ln for ln in lock.read_text().splitlines() if not ln.startswith(_INPUTS_MARK)]
    lines.insert(0, f"{_INPUTS_MARK}{inputs_digest(root / 'pyproject.toml')}")
    lock.write_text("\n".join(lines) + "\n")


def problem(root: Path) -> str | None:
    """Why the lock cannot be installed as it is, or None when it can."""
    lock = root / LOCK
    if not lock.is_file():
        return f"{LOCK} is missing: run '{REFRESH}'"
    if recorded_digest(lock) != inputs_digest(root / "pyproject.toml"):
        return f"{LOCK} is out of date with pyproject.toml's dependencies: run '{REFRESH}'"
    return None


def build_requirements(root: Path) -> str:
    """pyproject.toml's build-system requirements, one per line (to lock them)."""
    data = tomllib.loads((root / "pyproject.toml").read_text())
    return "\n".join(data["build-system"]["requires"]) + "\n"


def fingerprint() -> str:
    """sha256 of the lock this environment was installed from: the Makefile writes it into the
    environment's stamp file when it installs (the checkout's lock may have changed since), else
    'not installed from the lock'."""
    stamp_file = Path(sys.prefix) / INSTALLED_STAMP
    recorded = stamp_file.read_text().strip() if stamp_file.is_file() else ""
    return recorded or "not installed from the lock"


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if argv == ["check"]:
        if reason := problem(root):
            print(f"kperf: error: {reason}", file=sys.stderr)
            return 1
        return 0
    if argv == ["stamp"]:
        stamp(root)
        return 0
    if argv == ["build-requirements"]:
        sys.stdout.write(build_requirements(root))
        return 0
    print("usage: python3 -m kperf.lockfile check|stamp|build-requirements", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
