"""A study's notebooks share one real kernel (kperf.study.kernel): nothing a notebook defined reaches the next, what it
imported stays, a kernel that died is started again, and none is left running after."""

from __future__ import annotations

from pathlib import Path

import nbformat
import psutil
import pytest

from kperf.errors import KperfError
from kperf.study import kernel, notebooks


def notebook(folder: Path, name: str, *cells: str) -> None:
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("tag = None", metadata={"tags": ["parameters"]}),
                *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(nb, folder / f"{name}.ipynb")


def outputs(path: Path) -> list[str]:
    executed = nbformat.read(path, as_version=4)
    return [o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def test_a_studys_notebooks_share_one_kernel_and_nothing_they_define(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    folder, run = tmp_path / "notebooks", tmp_path / "run"
    folder.mkdir()
    monkeypatch.setenv("KPERF_NOTEBOOKS", str(folder))
    notebook(folder, "first", "import os, sys, wave\nleft = 1\nprint(os.getpid(), 'wave' in sys.modules)")
    notebook(folder, "second", "import os, sys\nprint(os.getpid(), 'wave' in sys.modules, 'left' in dir(), tag)")
    notebook(folder, "dies", "import os\nos._exit(1)")
    with kernel.shared(folder) as shared:
        first = outputs(notebooks.execute("first", run, {"tag": "a"}, progress=False, kernel=shared))
        second = outputs(notebooks.execute("second", run, {"tag": "b"}, progress=False, kernel=shared))
        pid = int(first[0].split()[0])
        assert first == [f"{pid} True\n"] and second == [f"{pid} True False b\n"]  # one kernel, its modules, not its names
        counts = [c.execution_count for c in nbformat.read(run / "notebooks" / "second.ipynb", 4).cells]
        assert counts == list(range(1, len(counts) + 1))  # a new session: its cells count from 1
        with pytest.raises(KperfError):
            notebooks.execute("dies", run, {}, progress=False, kernel=shared)
        again = outputs(notebooks.execute("second", run, {"tag": "c"}, progress=False, kernel=shared))
        restarted = int(again[0].split()[0])
        assert restarted != pid and again == [f"{restarted} False False c\n"]  # a new kernel, with nothing imported
    assert not psutil.pid_exists(restarted) or psutil.Process(restarted).status() == psutil.STATUS_ZOMBIE
