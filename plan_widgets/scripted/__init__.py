"""The scripted model: an offline stand-in for the Anthropic API, driven by a YAML script.

``ScriptedModel(script).start()`` serves the script on 127.0.0.1 in a child process;
``.env()`` is what a Claude Code CLI needs to talk to it (it goes only into the CLI's
environment, never the kernel's). ``.requests()`` reads back the log of what was asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ._script import Block, Fail, Script, ScriptError, Step, When, load_script

log = logging.getLogger("plan_widgets")

__all__ = ["Block", "Fail", "Script", "ScriptError", "ScriptedModel", "Step", "When",
           "load_script"]

START_TIMEOUT = 20.0
SCRIPTED_KEY = "sk-ant-scripted-offline"


class ScriptedModel:
    """A scripted model server in a child process (one per session)."""

    def __init__(self, script: str | os.PathLike[str],
                 log_path: str | os.PathLike[str] | None = None,
                 cwd: str | None = None) -> None:
        self.script_path = str(Path(script).resolve())
        try:  # fail here, in one line, before any process starts
            self.retries = load_script(self.script_path).retries
        except ScriptError as e:
            raise ScriptError(f"{e} (fix the file, or give another with --scripted)") from None
        self.log_path = Path(log_path) if log_path else None
        if self.log_path is not None:
            # its request log sits beside the session logs: a folder that cannot be made is
            # the log folder's fault (one line naming the setting), not the model's
            from ..store import prepare_log_dir

            prepare_log_dir(self.log_path.parent)
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.port = 0
        self._proc: Any = None

    def _argv(self) -> list[str]:
        argv = [sys.executable, "-m", "plan_widgets.scripted", self.script_path, "--cwd", self.cwd]
        if self.log_path is not None:
            argv += ["--log", str(self.log_path)]
        return argv

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment for a CLI that should talk to this model and nothing else."""
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": SCRIPTED_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(self.retries),
        }

    def requests(self, pings: bool = False) -> list[dict[str, Any]]:
        """The requests served so far (without pings unless asked)."""
        if self.log_path is None or not self.log_path.exists():
            return []
        out = []
        for line in self.log_path.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if pings or not r.get("ping"):
                out.append(r)
        return out

    # -- lifetime -------------------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Start the server and wait (bounded) until it listens."""
        self._proc = subprocess.Popen(self._argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, cwd=self.cwd,
                                      start_new_session=True)
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(self._proc.stdout, selectors.EVENT_READ)
        if not sel.select(START_TIMEOUT):
            self.stop()
            raise ScriptError("the scripted model did not start in time")
        line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read().decode(errors="replace").strip()
            self.stop()
            raise ScriptError(err.splitlines()[-1] if err else "the scripted model exited")
        try:
            self._read_port(line)
        except ScriptError:
            self.stop()
            raise
        return self

    @classmethod
    async def astart(cls, script: str | os.PathLike[str], log_path: Any = None,
                     cwd: str | None = None) -> ScriptedModel:
        """Start without blocking the event loop."""
        m = cls(script, log_path, cwd)
        m._proc = await asyncio.create_subprocess_exec(
            *m._argv(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=m.cwd,
            start_new_session=True)  # a kernel interrupt (SIGINT to its group) spares it
        try:
            line = await asyncio.wait_for(m._proc.stdout.readline(), START_TIMEOUT)
        except asyncio.TimeoutError:
            await m.astop()
            raise ScriptError("the scripted model did not start in time") from None
        except BaseException:  # cancelled while it starts (a stop, a close): it goes too
            m._kill()  # (measured: `%claude stop` right after a resume left it running)
            raise
        if not line:
            err = (await m._proc.stderr.read()).decode(errors="replace").strip()
            await m.astop()
            raise ScriptError(err.splitlines()[-1] if err else "the scripted model exited")
        try:
            m._read_port(line)
        except ScriptError:
            await m.astop()
            raise
        return m

    def _read_port(self, line: bytes) -> None:
        text = line.decode().strip()
        if not text.startswith("PORT "):
            raise ScriptError(f"the scripted model said {text!r}")
        self.port = int(text.split()[1])

    def _kill(self) -> None:
        """End it at once, without waiting (the loop's child watcher reaps it)."""
        p, self._proc = self._proc, None
        if p is not None and p.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                p.kill()

    def stop(self) -> None:
        p = self._proc
        if p is None:
            return
        self._proc = None
        self._stop_popen(p)

    async def astop(self) -> None:
        p = self._proc
        if p is None:
            return
        self._proc = None
        if isinstance(p, subprocess.Popen):
            await asyncio.get_running_loop().run_in_executor(None, self._stop_popen, p)
            return
        try:
            if p.stdin is not None:
                p.stdin.close()
            await asyncio.wait_for(p.wait(), 5)
        except Exception:  # it did not exit when asked: kill it
            log.debug("the scripted model did not exit when asked", exc_info=True)
            try:
                p.kill()
                await asyncio.wait_for(p.wait(), 5)
            except Exception:  # already gone: nothing left to stop
                log.debug("the scripted model did not stop", exc_info=True)

    @staticmethod
    def _stop_popen(p: subprocess.Popen[bytes]) -> None:
        try:
            p.stdin.close()  # type: ignore[union-attr]
            p.wait(5)
        except Exception:  # it did not exit when asked: kill it
            log.debug("the scripted model did not exit when asked", exc_info=True)
            p.kill()
            p.wait(5)
        finally:
            for f in (p.stdout, p.stderr):
                if f is not None:
                    f.close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
