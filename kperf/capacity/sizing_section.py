"""The capacity report's "what to buy" section: :mod:`kperf.sizing`'s answer for the workload measured, from the
costs of the study it was measured in (a capacity run alone measures its workload, not the costs a plan needs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from IPython.display import Markdown

from kperf.capacity import latency_bound
from kperf.errors import KperfError
from kperf.sizing import broker, measured, needs, text
from kperf.study import runs


def items(folder: Path, found: dict[str, Any]) -> list[object]:
    """The section for the capacity run in ``folder``: the plan from its study's records when it is a study's
    (``kperf study --workload``), else how to get one."""
    topics = tuple(needs.Topic(**topic) for topic in found["workload"].get("sizing", []))
    study = Path(folder).parent
    heading = Markdown("### What to buy")
    if not topics:
        return []  # a capacity run recorded before sizing existed
    if Path(folder).name != runs.CAPACITY or not (study / "results").is_dir():
        return [heading, Markdown("This run measured the workload alone: `kperf plan WORKLOAD.yaml --from RUN "
                                  "--broker cores=...` sizes it from a study's costs (docs/sizing.md).")]
    if not measured.on_local_cluster(found):  # brokers like the load's host would mean nothing
        return [heading, Markdown(f"`kperf plan WORKLOAD.yaml --from {study.name} --broker cores=...` sizes it from "
                                  "this study's costs, for the broker you describe (docs/sizing.md).")]
    try:
        costs, cores = measured.costs_of([study])
        answer = needs.size(topics, costs, broker.like_host(cores), cores, workload=found["workload"]["name"])
    except KperfError as exc:
        return [heading, Markdown(f"No plan from this study's records: {exc}")]
    bound = latency_bound.of(found)
    return [heading, Markdown("From this study's own costs, for brokers like its host (`kperf plan` takes the broker "
                              "to buy, docs/sizing.md):\n\n```\n" + "\n".join(text.lines(answer)) + "\n```"
                              + (f"\n\n{bound.line()}" if bound is not None else ""))]
