"""A real JupyterHub for tests: DummyAuthenticator, SimpleLocalProcessSpawner (a home per user),
configurable-http-proxy from npm, and each user's kernel driven over the Hub's proxy.

Measured (JupyterHub 6.1.1, configurable-http-proxy 5.3): the Hub is up in about 3 s, a
single-user server in about 4 s. Everything here is asyncio (tornado's HTTP and WebSocket
clients, which JupyterHub brings along); every wait is bounded.

The proxy is installed by ``scripts/test`` (``npm install configurable-http-proxy`` into
``.ci/node``); :func:`proxy_command` says clearly when it is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from shown import Shown
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

ROOT = Path(__file__).resolve().parents[1]
PROXY = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"


def proxy_command() -> str:
    """The configurable-http-proxy executable, or an error that says how to get it."""
    found = str(PROXY) if PROXY.exists() else shutil.which("configurable-http-proxy")
    if not found:
        raise RuntimeError(
            "configurable-http-proxy is missing: run ./scripts/test (it runs `npm install "
            "--prefix .ci/node configurable-http-proxy`; Node.js and npm must be installed)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CONFIG = """\
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.spawner_class = "simple"
c.Authenticator.allow_all = True
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# a per-user Claude config folder, as on zero-to-jupyterhub (docs/deploy.md)
c.Spawner.environment = {{"CLAUDE_CONFIG_DIR": lambda sp: sp.home_dir + "/.claude",
                          "PYDEVD_DISABLE_FILE_VALIDATION": "1"}}
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {dir!r} + "/proxy.pid"
c.JupyterHub.db_url = "sqlite:///" + {dir!r} + "/hub.sqlite"
c.JupyterHub.cookie_secret_file = {dir!r} + "/cookie_secret"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.services = [{{"name": "tester", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "tester", "services": ["tester"],
    "scopes": ["admin:users", "admin:servers", "access:servers"]}}]
"""


class Hub:
    """One JupyterHub process (with its proxy) in a scratch folder; users' homes under it."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder
        self.homes = folder / "homes"
        self.homes.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        singleuser = str(Path(sys.executable).parent / "jupyterhub-singleuser")
        args = ["--allow-root"] if os.geteuid() == 0 else []
        (folder / "jupyterhub_config.py").write_text(CONFIG.format(
            homes=str(self.homes), singleuser=singleuser, args=args, port=self.port,
            hub_port=_free_port(), api_port=_free_port(), proxy=proxy_command(),
            dir=str(folder), token=self.token))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE_", "JUPYTER")) and k != "CLAUDECODE"}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        self.log = open(folder / "hub.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(folder / "jupyterhub_config.py")],
            cwd=folder, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.http = AsyncHTTPClient()

    async def api(self, method: str, path: str, body: Any = None, *, hub: bool = True,
                  ok: tuple[int, ...] = (200, 201, 202, 204), timeout: float = 30) -> Any:
        """A REST call with the service token (``hub``: under /hub/api, else under /)."""
        url = f"{self.url}/hub/api{path}" if hub else f"{self.url}{path}"
        req = HTTPRequest(url, method=method, request_timeout=timeout,
                          headers={"Authorization": f"token {self.token}"},
                          body=None if body is None and method != "POST" else
                          json.dumps(body or {}), allow_nonstandard_methods=True)
        try:
            resp = await self.http.fetch(req, raise_error=False)
        except (OSError, HTTPClientError) as e:
            raise ConnectionError(f"{method} {url}: {e}") from e
        if resp.code not in ok:
            raise ConnectionError(f"{method} {url}: HTTP {resp.code} {resp.body[:300]!r}")
        return json.loads(resp.body) if resp.body else None

    async def ready(self, timeout: float = 60) -> None:
        async def up() -> bool:
            try:
                await self.api("GET", "/", timeout=5)
                return True
            except ConnectionError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the Hub exited: {self.log_tail()}") from None
                return False
        await until(up, timeout, "the Hub to answer")

    async def start_server(self, user: str, timeout: float = 120) -> None:
        """Create ``user`` and start their single-user server (the Hub makes their home)."""
        await self.api("POST", f"/users/{user}", ok=(201, 409))
        await self.api("POST", f"/users/{user}/server", ok=(201, 202, 400))

        async def ready() -> bool:
            u = await self.api("GET", f"/users/{user}")
            server = (u.get("servers") or {}).get("")
            return bool(server and server.get("ready"))
        await until(ready, timeout, f"{user}'s server to be ready")

    async def stop_server(self, user: str, timeout: float = 60) -> None:
        """The Hub stops ``user``'s server (as the admin page's Stop, or a culler)."""
        await self.api("DELETE", f"/users/{user}/server", ok=(202, 204))

        async def gone() -> bool:
            u = await self.api("GET", f"/users/{user}")
            return not (u.get("servers") or {})
        await until(gone, timeout, f"{user}'s server to stop")

    def home(self, user: str) -> Path:
        return self.homes / user

    def log_tail(self, n: int = 3000) -> str:
        self.log.flush()
        return (self.dir / "hub.log").read_bytes()[-n:].decode(errors="replace")

    def stop(self) -> None:
        """SIGTERM: the Hub stops the proxy and the servers; anything left is killed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group we started, and only it
        except ProcessLookupError:
            pass
        self.proc.wait(10)
        self.log.close()


async def until(pred: Any, timeout: float, what: str, tick: float = 0.25) -> Any:
    """Await ``pred()`` (sync or async) until truthy; TimeoutError naming ``what``."""
    end = time.monotonic() + timeout
    while True:
        value = pred()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(tick)


class UserKernel:
    """A kernel of ``user``'s own server, through the Hub's proxy: REST to start it, the
    kernel WebSocket for execute requests and widget comm messages (as tests/kernel.py)."""

    def __init__(self, hub: Hub, user: str) -> None:
        self.hub, self.user = hub, user
        self.session = uuid.uuid4().hex
        self.ws: WebSocketClientConnection | None = None
        self.kernel_id = ""
        self.messages: list[dict[str, Any]] = []
        self.widgets: dict[str, dict[str, Any]] = {}
        self.in_view = Shown(self.widgets)  # the models a page shows (tests/shown.py)
        self._reader: asyncio.Task[None] | None = None

    async def start(self, kernel_id: str | None = None) -> UserKernel:
        """Start a kernel, or connect to ``kernel_id`` (a second browser tab on it)."""
        if kernel_id is None:
            k = await self.hub.api("POST", f"/user/{self.user}/api/kernels",
                                   {"name": "python3"}, hub=False, timeout=60)
            kernel_id = k["id"]
        self.kernel_id = kernel_id
        url = (f"ws://127.0.0.1:{self.hub.port}/user/{self.user}/api/kernels/"
               f"{self.kernel_id}/channels?session_id={self.session}")
        self.ws = await websocket_connect(HTTPRequest(
            url, headers={"Authorization": f"token {self.hub.token}"}, request_timeout=60),
            max_message_size=64 * 1024 * 1024)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self.execute("1")  # the kernel answers
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                return
            if isinstance(raw, bytes):
                continue  # a message with binary buffers (no widget state we read is one)
            msg = json.loads(raw)
            self.messages.append(msg)
            kind, content = msg["header"]["msg_type"], msg.get("content", {})
            if kind == "comm_open" and content.get("target_name") != "jupyter.widget":
                # as a page does for a target it has no handler for: close it (this is how
                # the kernel knows someone is there, ipython/unattended.py)
                self._send("comm_close", {"comm_id": content["comm_id"], "data": {}})
            elif kind == "comm_open":
                self.widgets[content["comm_id"]] = dict(content["data"].get("state", {}))
            elif kind == "comm_msg" and content.get("data", {}).get("method") == "update":
                self.widgets.setdefault(content["comm_id"], {}).update(
                    content["data"].get("state", {}))
            self.in_view.heard(msg)

    def _send(self, msg_type: str, content: dict[str, Any]) -> str:
        assert self.ws is not None
        msg_id = uuid.uuid4().hex
        self.ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": msg_type, "username": self.user,
                       "session": self.session, "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "content": content, "channel": "shell",
            "buffers": []}))
        return msg_id

    def output(self, msg_id: str) -> str:
        """The text a request printed (streams, results, errors), so far."""
        out = []
        for m in self.messages:
            if m.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            c, kind = m.get("content", {}), m["header"]["msg_type"]
            if kind == "stream":
                out.append(c["text"])
            elif kind in ("execute_result", "display_data"):
                out.append(c.get("data", {}).get("text/plain", "") + "\n")
            elif kind == "error":
                out.append("\n".join(c.get("traceback", [])) + f"\n{c['ename']}: {c['evalue']}")
        return "".join(out)

    async def execute(self, code: str, timeout: float = 120) -> str:
        """Run ``code``; returns its text output once the kernel is idle again."""
        msg_id = self._send("execute_request", {"code": code, "silent": False,
                                                "store_history": True, "allow_stdin": False})

        def idle() -> bool:
            return any(m["header"]["msg_type"] == "status"
                       and m.get("parent_header", {}).get("msg_id") == msg_id
                       and m["content"].get("execution_state") == "idle"
                       for m in self.messages)
        await until(idle, timeout, f"{self.user}'s cell to finish: {code[:60]!r}", tick=0.05)
        return self.output(msg_id)

    async def eval(self, expr: str, timeout: float = 60) -> str:
        out = await self.execute(f"print(repr({expr}))", timeout)
        return out.strip().splitlines()[-1] if out.strip() else ""

    async def wait_widget(self, model: str, timeout: float = 60, **state: Any) -> str:
        """The first widget matching that the page would show (tests/shown.py)."""
        def find() -> str | None:
            for cid, s in self.widgets.items():
                if cid in self.in_view and s.get("_model_name") == model and all(
                        s.get(k) == v for k, v in state.items()):
                    return cid
            return None
        return str(await until(find, timeout, f"{user_of(self)}'s {model} {state}"))

    def click(self, comm_id: str) -> None:
        self._send("comm_msg", {"comm_id": comm_id, "data": {
            "method": "custom", "content": {"event": "click"}}})

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.ws is not None:
            self.ws.close()


def user_of(k: UserKernel) -> str:
    return k.user
