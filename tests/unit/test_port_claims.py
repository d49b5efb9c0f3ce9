"""Ports claimed for a starting cluster are not handed to another process until its claim ends."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

from kperf.kafka import port_claims

BLOCKS = [[9092, 9192], [9102, 9202], [9112, 9212]]


def everything_free(port: int) -> bool:
    return True


def test_a_claimed_block_is_skipped_and_a_busy_one_too(tmp_path: Path) -> None:
    claims = tmp_path / "claims.json"
    assert port_claims.claim(BLOCKS, everything_free, claims) == BLOCKS[0]
    assert port_claims.claim(BLOCKS, everything_free, claims) == BLOCKS[1]  # the first still claimed, by this process
    assert port_claims.claim(BLOCKS, lambda port: port != 9112, claims) is None  # the last found busy


def test_a_claim_ends_with_its_process_and_with_its_time(tmp_path: Path) -> None:
    claims = tmp_path / "claims.json"
    child = multiprocessing.get_context("spawn").Process(target=port_claims.claim,
                                                          args=(BLOCKS, everything_free, claims))
    child.start()
    child.join(60)
    assert child.exitcode == 0 and str(BLOCKS[0][0]) in json.loads(claims.read_text())
    assert port_claims.claim(BLOCKS, everything_free, claims) == BLOCKS[0]  # its claimer is gone
    held = json.loads(claims.read_text())
    held[str(BLOCKS[0][0])]["at"] = time.time() - port_claims.CLAIM_S - 1
    claims.write_text(json.dumps(held))
    assert port_claims.claim(BLOCKS, everything_free, claims) == BLOCKS[0]  # its time is up
    assert json.loads(claims.read_text())[str(BLOCKS[0][0])]["pid"] == os.getpid()


def test_overlapping_blocks_are_not_handed_out_twice(tmp_path: Path) -> None:
    claims = tmp_path / "claims.json"
    wide = [list(range(9092, 9108))]  # 16 brokers: into the next block's ports
    assert port_claims.claim(wide, everything_free, claims) == wide[0]
    assert port_claims.claim(BLOCKS, everything_free, claims) == BLOCKS[2]


def test_an_unreadable_claims_file_holds_no_claim(tmp_path: Path) -> None:
    claims = tmp_path / "claims.json"
    claims.write_text("{half")
    assert port_claims.claim(BLOCKS, everything_free, claims) == BLOCKS[0]
