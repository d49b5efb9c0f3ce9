"""The dependency lock: current with pyproject.toml, exact, hashed, and what this environment runs."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from kperf import lockfile
from tests.helpers import ROOT

PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)==(?P<version>\S+)(?: ; (?P<marker>.+?))? \\$")


def pins(lock: Path) -> dict[str, list[tuple[str, str | None]]]:
    """name -> [(version, environment marker)] of every requirement in a pip-format lock."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for line in lock.read_text().splitlines():
        if match := PIN.match(line):
            found.setdefault(canonical(match["name"]), []).append((match["version"], match["marker"]))
    return found


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_lock_is_current_with_pyproject() -> None:
    assert lockfile.problem(ROOT) is None


def test_every_requirement_is_pinned_exactly_with_hashes() -> None:
    for name in (lockfile.LOCK, lockfile.BUILD_LOCK):
        text = (ROOT / name).read_text()
        requirements = [ln for ln in text.splitlines() if ln and not ln.startswith((" ", "#"))]
        assert requirements, name
        for line in requirements:
            assert PIN.match(line), f"{name}: not an exact pin: {line}"
        blocks = re.split(r"\n(?=\S)", text)
        assert all("--hash=sha256:" in b for b in blocks if PIN.match(b.splitlines()[0])), name


def test_this_environment_runs_exactly_the_locked_versions() -> None:
    """What `make test` installed is what the lock pins: nothing resolved differently."""
    from packaging.markers import Marker  # in the lock (pytest needs it)

    for name, candidates in pins(ROOT / lockfile.LOCK).items():
        wanted = [v for v, marker in candidates if marker is None or Marker(marker).evaluate()]
        if not wanted:
            continue  # for another Python or platform
        assert metadata.version(name) == wanted[0], name


def test_a_changed_dependency_makes_the_lock_stale_and_names_the_command(tmp_path: Path) -> None:
    for name in ("pyproject.toml", lockfile.LOCK):
        shutil.copy(ROOT / name, tmp_path / name)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('addopts = "', 'addopts = "-q '))
    assert lockfile.problem(tmp_path) is None  # not a dependency: the lock still holds
    pyproject.write_text(pyproject.read_text().replace('"pyyaml>=6"', '"pyyaml>=6.0.1"'))
    assert lockfile.problem(tmp_path) == (
        "requirements.lock is out of date with pyproject.toml's dependencies: run 'make lock'"
    )
    result = subprocess.run([sys.executable, "-m", "kperf.lockfile", "check"], cwd=tmp_path, env={"PYTHONPATH": str(ROOT)},
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "run 'make lock'" in result.stderr
    (tmp_path / lockfile.LOCK).unlink()
    assert lockfile.problem(tmp_path) == "requirements.lock is missing: run 'make lock'"


def test_fingerprint_is_the_sha256_of_the_lock_make_installed() -> None:
    assert (Path(sys.prefix) / lockfile.INSTALLED_STAMP).is_file(), "run the tests in the env `make` installs"
    assert lockfile.fingerprint() == hashlib.sha256((ROOT / lockfile.LOCK).read_bytes()).hexdigest()


@pytest.mark.parametrize("module", ["kperf.cli", "kperf.study.plan"])
def test_the_command_line_imports_no_scientific_or_notebook_library(module: str) -> None:
    """`kperf --help`, `study --plan` and bad-input errors answer at once: nothing heavy is imported for them."""
    code = f"import sys, {module}; print('\\n'.join(sys.modules))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    heavy = {"pandas", "numpy", "scipy", "matplotlib", "seaborn", "nbformat", "nbconvert", "papermill", "jsonschema",
             "confluent_kafka", "pyarrow", "psutil", "hdrh", "cryptography", "IPython"}  # fmt: skip
    assert loaded.isdisjoint(heavy), sorted(loaded & heavy)
