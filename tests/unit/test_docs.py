"""The documentation site builds in MkDocs' strict mode, so a broken link or a page left out fails the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
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
