"""One notebook kernel for a study's notebooks, one after another: started once, its namespace emptied before each.

A notebook run with a kernel of its own paid that kernel's start and its imports (pandas, scipy.stats, matplotlib,
kperf) before its first cell did anything: 3.3 s of CPU on the project's machine, idle (0.9 s the kernel, 2.3-2.5 s
the imports; 2026-12-03), and a smoke study runs 14 notebooks. Here what a notebook defined is gone before the
next one starts (IPython's ``reset``, as a new session: its cells count from 1 again), while the modules it
imported stay loaded, which is the saving. A kernel found dead is started again for the next notebook. Each
notebook's kernel clients are closed after it (papermill leaves a lent kernel's own open).

``kperf report``, ``kperf capacity``, nbval and JupyterLab still give each notebook a kernel of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync

from kperf.errors import KperfError

KERNEL = "python3"  # every kperf notebook's kernelspec
READY_S = 60.0  # a started kernel answers within this, or the study stops naming it
RESET_S = 60.0  # and empties its namespace within this
# IPython's reset (names and history, as a new session; not sys.modules), keeping the module's own dunders:
# multiprocessing's spawn reads __main__.__spec__, which the reset alone deletes
RESET = ("(lambda shell, own: (shell.reset(new_session=True), shell.user_ns.update(own)))"
         "(get_ipython(), {k: v for k, v in get_ipython().user_ns.items() if k.startswith('__') and k.endswith('__')})")


class _Manager(AsyncKernelManager):
    """A kernel manager that remembers the clients it hands out, so each notebook's are closed after it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.handed_out: list[AsyncKernelClient] = []

    def client(self, **kwargs: Any) -> AsyncKernelClient:  # type: ignore[override]  # typed as the blocking one's
        made = super().client(**kwargs)
        self.handed_out.append(made)
        return made

    def close_clients(self) -> None:
        while self.handed_out:
            self.handed_out.pop().stop_channels()


class Kernel:
    """The study's kernel, started in ``cwd`` (the notebooks' folder) at its first notebook; :meth:`close` stops it."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.manager: _Manager | None = None

    @contextmanager
    def lent(self) -> Iterator[AsyncKernelManager]:
        """The kernel for one notebook's run (papermill's ``km``): alive, with nothing defined; its clients closed
        after."""
        manager = run_sync(self._ready)()
        try:
            yield manager
        finally:
            manager.close_clients()

    async def _ready(self) -> _Manager:
        if self.manager is not None and await self.manager.is_alive():
            await self._reset()
            return self.manager
        if self.manager is not None:  # died since its last notebook: its files and ports go before a new one
            await self.manager.cleanup_resources()
        self.manager = _Manager(kernel_name=KERNEL)
        await self.manager.start_kernel(cwd=str(self.cwd))
        return self.manager

    async def _reset(self) -> None:
        assert self.manager is not None
        client = self.manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=READY_S)  # RuntimeError past it
            reply = await client.execute_interactive(RESET, store_history=False, timeout=RESET_S,
                                                     output_hook=lambda message: None)  # TimeoutError past it
        except (TimeoutError, RuntimeError):
            raise KperfError(f"the study's notebook kernel did not answer and reset within {READY_S + RESET_S:.0f} s "
                             "before its next notebook") from None
        finally:
            self.manager.close_clients()
        if reply["content"]["status"] != "ok":
            raise KperfError(f"the study's notebook kernel could not reset before its next notebook: "
                             f"{reply['content'].get('evalue')}")

    def close(self) -> None:
        """Stop the kernel (its shutdown request, then a kill past jupyter_client's wait), if one was started."""
        if self.manager is not None:
            manager, self.manager = self.manager, None
            run_sync(manager.shutdown_kernel)()


@contextmanager
def shared(cwd: Path) -> Iterator[Kernel]:
    """A :class:`Kernel` for the notebooks run inside, stopped when they are done, however that ends."""
    kernel = Kernel(cwd)
    try:
        yield kernel
    finally:
        kernel.close()
