"""The documentation site builds in MkDocs' strict mode (a broken link or a page left out fails the tests); the README
stays a newcomer's page whose links reach the checkout; the licence is the one pyproject.toml declares."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.helpers import ROOT

MKDOCS = str(Path(sys.executable).with_name("mkdocs"))


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MKDOCS, "build", "--strict", "--config-file", str(root / "mkdocs.yml"), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_docs_build_in_strict_mode(tmp_path: Path) -> None:
    result = build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "compare" / "index.html").is_file()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    with (tmp_path / "docs" / "index.md").open("a") as page:
        page.write("\nSee [the missing page](missing.md).\n")
    result = build(tmp_path, tmp_path / "site")
    assert result.returncode == 1 and "missing.md" in result.stderr


README = ROOT / "README.md"
README_MAX_BYTES = 15_000  # a newcomer's page; the reference lives in docs/


def test_the_readme_stays_a_newcomers_page() -> None:
    assert len(README.read_bytes()) <= README_MAX_BYTES


def test_the_readmes_links_reach_files_of_the_checkout() -> None:
    """MkDocs checks the site's links; the README is outside it, so its relative links are checked here."""
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text())
    local = [t for t in targets if "://" not in t]
    assert local, "the README links to the docs"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing


def test_the_licence_is_the_one_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    text = (ROOT / "LICENSE").read_text()
    assert declared == "Apache-2.0"
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def pages() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in [README, *sorted((ROOT / "docs").glob("*.md"))]}


def resolve(dotted: str) -> object:
    """``kperf.a.b`` as an object: each part an attribute of the last, or else a module to import."""
    parts = dotted.split(".")
    found: object = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 2):
        found = getattr(found, part) if hasattr(found, part) else importlib.import_module(".".join(parts[:i]))
    return found


def test_the_code_the_docs_name_exists() -> None:
    """A module, function or file the docs cite by name is there, so a rename cannot leave a page pointing at nothing."""
    missing = []
    for page, text in pages().items():
        for dotted in re.findall(r"`(kperf(?:\.[A-Za-z_]\w*)+)", text):
            if dotted == "kperf.log":  # the run folder's log file, not a module
                continue
            try:
                resolve(dotted)
            except (AttributeError, ModuleNotFoundError):
                missing.append(f"{page}: {dotted}")
        for path in re.findall(r"`((?:kperf|tests|notebooks|examples)/[\w./*-]+)`", text):
            if not list(ROOT.glob(path)):
                missing.append(f"{page}: {path}")
    assert not missing
