"""A local cluster's links: each broker reached through a TCP proxy of its own, so a fault can slow one broker's
link (added latency, a bandwidth cap) for its clients and for the followers fetching from it, and nothing else
on the machine (the kernel's shaping of the loopback would slow every process on it).

The proxy is Shopify's toxiproxy (`make toxiproxy` builds the version tools/toxiproxy pins), one server for the
cluster with one proxy per broker. With links (``kperf cluster up --links``), node i listens on its port plus
LINK_PORT_OFFSET and advertises its port, where its proxy listens: every connection to it, a client's or a
follower's, goes through the proxy; the controllers' own listener does not. A fault adds a toxic to one proxy
and removes it after (:mod:`kperf.drivers.fault_kinds`).
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from kperf.errors import KperfError
from kperf.paths import cache_dir
from kperf.processes import die_with_parent, recorded

LINK_PORT_OFFSET = 200  # a linked node listens this far above the port it advertises (its proxy's)
START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 10.0
HOST = "127.0.0.1"


def server_path() -> Path:
    """The toxiproxy server `make toxiproxy` builds, or a one-line error saying how to get it."""
    path = cache_dir() / "toxiproxy" / "toxiproxy-server"
    if not path.is_file():
        raise KperfError(f"a cluster with links needs toxiproxy at {path}: run 'make toxiproxy' (it needs Go)")
    return path


def listen_port(port: int) -> int:
    """Where a linked node listens, behind its proxy on ``port``."""
    return port + LINK_PORT_OFFSET


def proxy_name(node_id: int) -> str:
    return f"broker-{node_id}"


@dataclass(frozen=True)
class LinkServer:
    """The running proxy server of a cluster: its process and its HTTP API."""

    pid: int
    create_time: float
    api: str  # http://127.0.0.1:PORT

    def process(self) -> psutil.Process | None:
        """The running server, or None (never another process that reused the pid)."""
        return recorded(self.pid, self.create_time)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One call of the API; its JSON answer (None when empty), or a one-line error with what it said."""
        data = None if body is None else json.dumps(body).encode()
        call = urllib.request.Request(self.api + path, data=data, method=method,
                                      headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(call, timeout=REQUEST_TIMEOUT_S) as answer:
                text = answer.read()
        except urllib.error.HTTPError as exc:
            said = exc.read().decode(errors="replace").strip()
            raise KperfError(f"the link proxy at {self.api} refused {method} {path}: {said or exc.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise KperfError(f"the link proxy at {self.api} did not answer {method} {path}: {exc}") from None
        try:
            return json.loads(text) if text.strip() else None
        except ValueError:  # /version answers in plain text
            return text.decode(errors="replace")

    def add(self, node_id: int, name: str, kind: str, stream: str, attributes: dict[str, int]) -> None:
        """A toxic on node ``node_id``'s link: ``kind`` (latency, bandwidth) on its ``stream`` (upstream: to the
        broker; downstream: from it)."""
        self.request("POST", f"/proxies/{proxy_name(node_id)}/toxics",
                     {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes})

    def remove(self, node_id: int, name: str) -> None:
        """The toxic ``name`` off node ``node_id``'s link, if it is there (undoing a fault that never began is no
        error of its own)."""
        if name in self.toxics(node_id):
            self.request("DELETE", f"/proxies/{proxy_name(node_id)}/toxics/{name}")

    def toxics(self, node_id: int) -> list[str]:
        """The names of the toxics on node ``node_id``'s link now."""
        return [t["name"] for t in self.request("GET", f"/proxies/{proxy_name(node_id)}/toxics") or []]

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "create_time": self.create_time, "api": self.api}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> LinkServer:
        return cls(raw["pid"], raw["create_time"], raw["api"])


def start(directory: Path, ports: dict[int, int], api_port: int, detach: bool) -> LinkServer:
    """The proxy server, logging to ``directory``/links.log, with a proxy per node id in ``ports`` (its advertised
    port to its listening one); it dies with kperf unless ``detach``."""
    with open(directory / "links.log", "ab") as out:
        proc = subprocess.Popen([str(server_path()), "-host", HOST, "-port", str(api_port)], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=None if detach else die_with_parent)
    try:
        server = LinkServer(proc.pid, psutil.Process(proc.pid).create_time(), f"http://{HOST}:{api_port}")
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                server.request("GET", "/version")
                break
            except KperfError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise KperfError(f"the link proxy did not start within {START_TIMEOUT_S:g} s: see "
                                     f"{directory / 'links.log'}") from None
                time.sleep(0.1)
        for node_id, port in ports.items():
            server.request("POST", "/proxies", {"name": proxy_name(node_id), "listen": f"{HOST}:{port}",
                                                "upstream": f"{HOST}:{listen_port(port)}", "enabled": True})
    except BaseException:  # nothing left running of a start that failed
        proc.kill()
        proc.wait()
        raise
    return server
