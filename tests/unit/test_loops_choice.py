"""Which hot loop a load process runs (kperf.drivers.loops): names checked before load, and what records say."""

from __future__ import annotations

from pathlib import Path

import pytest

from kperf.drivers import loops
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError


@pytest.mark.parametrize("spec", [ProducerSpec("127.0.0.1:1", "t", 100, records=10, loop="fast"),
                                  ConsumerSpec("127.0.0.1:1", "t", records=10, loop="fast")])
def test_an_unknown_loop_is_refused_before_any_load(spec: ProducerSpec | ConsumerSpec) -> None:
    with pytest.raises(KperfError, match="unknown loop 'fast': choose auto, native or python"):
        spec.check()


def test_auto_runs_native_where_built() -> None:
    assert loops.chosen("auto") == "native"  # make test-unit builds it first (make native)
    assert loops.chosen("python") == "python"


@pytest.mark.parametrize(("ran", "label"), [(["native"], "native"), (["native", "native"], "native"),
                                            (["python", "native", "native"], "native:2,python:1")])
def test_a_unit_says_which_loops_its_processes_ran(ran: list[str], label: str) -> None:
    assert loops.label(ran) == label


def test_without_the_build_auto_runs_python_and_native_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KPERF_CACHE", str(tmp_path))  # a cache 'make native' built nothing in
    assert loops.chosen("auto") == "python"
    with pytest.raises(KperfError, match=r"^the native loops are not built: run 'make native' \(needs gcc and npm\)$"):
        loops.check_loop("native")
