"""A measuring notebook fails when its experiment failed, as a study exits 3 then: under nbval and under papermill,
in its last cell (after its figures and tables), naming each failed unit and the broker's reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from kperf.kafka import METRICS_ENV
from kperf.study import plan, profiles
from tests.helpers import ROOT, local_cluster

NOTEBOOK = ROOT / "notebooks" / "batch.ipynb"
# Below the smoke profile's 100-byte record in its batch: the broker refuses every record, so every unit fails.
MAX_BYTES = "64"
REFUSED = "Broker: Message size too large"  # the broker's reason, as the producer reports it


def test_a_notebook_whose_every_unit_failed_fails_in_its_last_cell_naming_them(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(METRICS_ENV, raising=False)  # the kernels read this cluster's brokers, not the session's
    with local_cluster(1, tmp_path / "cluster", broker_config={"message.max.bytes": MAX_BYTES}) as cluster:
        # nbval runs the notebook as it is, in the smoke profile: every one of its units fails.
        env = {**{k: v for k, v in os.environ.items() if k != "KPERF_RUN_DIR"},
               "KPERF_BOOTSTRAP": cluster.bootstrap, "KPERF_PROFILE": "smoke", "KPERF_DATA": str(tmp_path / "nbval")}
        nbval = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--nbval-lax", str(NOTEBOOK)],
                               env=env, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
        shown = re.sub(r"\x1b\[[0-9;]*m", "", nbval.stdout)  # the kernel's traceback without its colours
        assert nbval.returncode == pytest.ExitCode.TESTS_FAILED, shown[-3000:]
        cells = sum(cell.cell_type == "code" for cell in nbformat.read(NOTEBOOK, as_version=4).cells)
        assert f"FAILED notebooks/batch.ipynb::Cell {cells - 1} " in shown  # the last: the figures and tables ran
        assert f"1 failed, {cells - 1} passed" in shown.splitlines()[-1]
        units = plan.units("batch", profiles.parameters("batch", "smoke"))
        assert f"UnitsFailed: batch: {len(units)} of {len(units)} unit(s) failed" in shown, shown[-3000:]
        for unit in units:
            assert f"batch: {unit.point.name} [{unit.client}, repeat {unit.repeat}] failed: " in shown
        assert REFUSED in shown

        # papermill, as a study runs it, narrowed to one unit.
        output = tmp_path / "batch.ipynb"
        with pytest.raises(papermill.PapermillExecutionError) as raised:
            papermill.execute_notebook(str(NOTEBOOK), str(output), cwd=str(NOTEBOOK.parent), progress_bar=False,
                                       parameters={"bootstrap": cluster.bootstrap, "run_dir": str(tmp_path / "run"),
                                                   "profile": "smoke", "clients": ["python"], "batch_sizes": [8192],
                                                   "throughputs": [-1]})
    assert raised.value.ename == "UnitsFailed"
    assert raised.value.evalue.startswith("batch: 1 of 1 unit(s) failed\n  batch: batch.size=8192 linger.ms=5 "
                                          "throughput=-1 [python, repeat 0] failed: ")
    assert REFUSED in raised.value.evalue
    code = [cell for cell in nbformat.read(output, as_version=4).cells if cell.cell_type == "code"]
    assert [i for i, cell in enumerate(code) if any(o.output_type == "error" for o in cell.outputs)] == [len(code) - 1]
