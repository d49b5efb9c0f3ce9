"""A Dask cluster on this host's loopback, started as a user starts one on load hosts: ``kperf bench``'s
comparison of load through Dask workers with direct processes (and the tests')."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from kperf.drivers.load_hosts.scheduler import connected, live_workers
from kperf.errors import KperfError
from kperf.processes import die_with_parent


class LocalDask:
    """A Dask scheduler and workers on this host's loopback (``dask scheduler``, ``dask worker --no-nanny``), as a
    user starts them on load hosts: for ``kperf bench``'s comparison and the tests. Every process is stopped by its
    pid (``stop``), and dies with the process that started it."""

    START_TIMEOUT_S = 60.0

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.scheduler_file = folder / "scheduler.json"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}  # by name: "scheduler", then each worker's

    def _spawn(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> None:
        dask = str(Path(sys.executable).with_name("dask"))
        with open(self.folder / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen([dask, *args], stdout=log, stderr=subprocess.STDOUT,
                                                    preexec_fn=die_with_parent, env=env)

    def start_scheduler(self) -> str:
        """Start the scheduler on 127.0.0.1 (a free port) and return its address once it serves."""
        self.scheduler_file.unlink(missing_ok=True)
        self._spawn("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(self.scheduler_file))
        deadline = time.monotonic() + self.START_TIMEOUT_S
        while not self.scheduler_file.is_file():
            if time.monotonic() > deadline or self.processes["scheduler"].poll() is not None:
                raise KperfError(f"the Dask scheduler did not start within {self.START_TIMEOUT_S:.0f} s "
                                 f"(see {self.folder / 'scheduler.log'})")
            time.sleep(0.1)
        self.address = str(json.loads(self.scheduler_file.read_text())["address"])
        return self.address

    def start_worker(self, name: str, host: str = "127.0.0.1", threads: int = 1, nanny: bool = False,
                     env: Mapping[str, str] | None = None) -> None:
        """Start one worker listening on ``host`` (a loopback address: 127.0.0.2 looks like a second host) and
        return once the scheduler lists it (``nanny``: under Dask's default nanny, which kperf refuses; ``env``:
        its environment instead of this process's, e.g. a load host without Java)."""
        self._spawn(name, "worker", self.address, "--nanny" if nanny else "--no-nanny", "--name", name, "--host", host,
                    "--nthreads", str(threads), "--no-dashboard", "--local-directory", str(self.folder / name), env=env)
        with connected(self.address) as client:
            deadline = time.monotonic() + self.START_TIMEOUT_S
            while name not in {w.get("name") for w in live_workers(client).values()}:
                if time.monotonic() > deadline or self.processes[name].poll() is not None:
                    raise KperfError(f"Dask worker {name} did not join within {self.START_TIMEOUT_S:.0f} s "
                                     f"(see {self.folder / (name + '.log')})")
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop every process started here, by its pid (workers first)."""
        for name in reversed(list(self.processes)):
            process = self.processes.pop(name)
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
