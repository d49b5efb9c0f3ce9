"""A client made while Ctrl-C lands: the interrupt arrives as itself once the client exists."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from kperf.kafka import clients


@pytest.fixture
def interruptible() -> Iterator[None]:
    """Ctrl-C raising KeyboardInterrupt, as in a terminal: a shell's background job (CI's) starts with SIGINT ignored."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.usefixtures("interruptible")
def test_an_interrupt_while_a_client_is_made_is_raised_as_itself_once_it_is_made() -> None:
    made: list[dict[str, Any]] = []

    def kind(config: dict[str, Any]) -> str:
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(10_000))  # Python runs the handler between these bytecodes: it must not raise in here
        made.append(config)
        return "client"

    with pytest.raises(KeyboardInterrupt):
        clients.made(kind, {"bootstrap.servers": clients.UNREACHABLE})
    assert made == [{"bootstrap.servers": clients.UNREACHABLE}]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_client_made_without_an_interrupt_is_returned_and_the_handlers_are_as_they_were() -> None:
    before = {s: signal.getsignal(s) for s in clients.HELD}
    assert clients.made(lambda config: sorted(config), {"b": 1, "a": 2}) == ["a", "b"]
    assert {s: signal.getsignal(s) for s in clients.HELD} == before
