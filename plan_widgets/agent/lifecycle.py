"""A session's life as named phases, run by its one owner task: restore, start, serve, stop.

The SDK's client must be connected, used and disconnected by one task (its anyio task group;
docs/cli.md#turns), so one long-lived task per session does all three, fed by a queue of turns.

- **restore** (at construction, synchronous): a resumed session folds its old log back into
  state at once, so a control bar shown now is already right;
- **start**: the scripted model (offline runs) or a credentials check, the event log, the
  ``session:started`` event, the CLI (``connect``: process start and ``initialize``);
- **serve**: a reader task turns the CLI's messages into signals while turns run in order;
- **stop**: open decisions end (never approved), the CLI and the scripted model exit, the log
  closes, and prompts still queued are told they did not run.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .. import model as ev
from ..model.errors import OptionError
from ..model.events import ModeSource
from ..model.options import ALL_MODES
from ..store import (
    EventLog,
    LogError,
    LogIncomplete,
    default_log_dir,
    find_session_log,
    read_events,
)
from . import wording
from .credentials import private_config_dir, require_credentials
from .decisions import KINDS, DecisionList
from .gate import EDIT_TOOLS, Gate
from .idle import Sleeper, SleepHost, budget_left
from .modes import Modes
from .plan_keeper import PlanKeeper
from .runner import Runner
from .scratch import ScratchDir
from .seam import AgentClient, ClientConfig, ClientFactory, HostTools, ScreenCallback

log = logging.getLogger("plan_widgets")
DISCONNECT_TIMEOUT = 10.0
TASK_TOOLS_ENV = {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}
"""Give the agent its task-list tools, so the turn can show its progress.

Measured (docs/cli.md#task-tools): with the default model this CLI offers neither TodoWrite nor
the Task* tools unless ``CLAUDE_CODE_ENABLE_TODO_TOOLS`` is set; with it, it offers TaskCreate /
TaskUpdate / TaskList / TaskGet (as deferred tools, callable directly), which never ask for
permission and run in plan mode too. Older models have them without it. A user's own setting
(in the session's ``env`` or the kernel's environment; ``CLAUDE_CODE_ENABLE_TASKS=0`` for
TodoWrite instead) wins; the checklist follows either shape."""


class LifecycleHost(SleepHost, Protocol):
    """What the lifecycle needs of its session besides the shared port and the idle watch's
    part: the kernel's tools, and the session's own steps when the CLI is up or gone."""

    @property
    def host_tools(self) -> HostTools | None: ...

    def restore(self, events: list[ev.Event]) -> None: ...
    def die(self, reason: str) -> None: ...
    def subscribe(self, fn: Callable[[Any], None]) -> None: ...


class Lifecycle:
    """The owner of one session's CLI, scripted model and event log.

    It runs the session's ``runner`` (turns), answers the CLI's permission requests through
    ``gate``, restores ``modes`` on a resume, and ends the open decisions of ``decision_list``."""

    def __init__(self, session: LifecycleHost, factory: ClientFactory | None, *,
                 runner: Runner, modes: Modes, gate: Gate, decision_list: DecisionList) -> None:
        self.s = session
        self.factory = factory
        self.runner = runner
        self.modes = modes
        self.gate = gate
        self.decision_list = decision_list
        self.client: AgentClient | None = None
        self.log: EventLog | None = None
        self.log_problem: str | None = None
        """Why the event log is incomplete (a full disk), or None: the session goes on."""
        self.stderr: deque[str] = deque(maxlen=40)
        """The CLI's own stderr lines (our diagnostics go to the ``plan_widgets`` logger)."""
        self.cli_env: dict[str, str] = {}
        self.connected = asyncio.Event()
        self.resumed_from: str | None = None
        self.resume_mode: str | None = None
        self.scripted: Any = None
        self.scratch: ScratchDir | None = None
        """The CLI's own TMPDIR, removed when it has exited (see :mod:`scratch`)."""
        self.reader: asyncio.Task[None] | None = None
        self.idle = Sleeper(self, session, runner, modes)
        """Closes the CLI when the session is idle, and resumes it for the next turn."""
        # every plan proposed is kept in the project's plans/ (store/plans.py), once logged
        session.subscribe(PlanKeeper(lambda: self.log.path.parent if self.log else None))
        # The SDK's first import (about 1.3 s, mostly its mcp dependency) runs in a thread from
        # here on, so the cell's widgets are built and the scripted model starts meanwhile
        # (docs/benchmarks.md, figure 3). Never at %load_ext: it would slow the user's cells.
        self._sdk_import: asyncio.Future[Any] | None = None
        if factory is None and "plan_widgets.agent.sdk" not in sys.modules:
            self._sdk_import = asyncio.get_running_loop().run_in_executor(
                None, importlib.import_module, "plan_widgets.agent.sdk")

    @property
    def log_dir(self) -> Path:
        o = self.s.options
        return Path(default_log_dir(o.cwd, o.log_dir))

    def write(self, event: ev.Event) -> ev.Event:
        """Append ``event`` to the log (numbered); a log that fails never stops the agent."""
        if self.log is None:
            return event
        try:
            return self.log.append(event)
        except LogIncomplete as e:  # a full disk: the session goes on, and says so once
            self._log_incomplete(e)
        except (OSError, ValueError) as e:  # an unserializable input
            log.error("event log %s: %s", self.log.path, e)
        return event

    def _log_incomplete(self, e: LogIncomplete) -> None:
        text = str(e)[:1].upper() + str(e)[1:]
        if self.log_problem is not None and f"from event {e.at}:" in self.log_problem:
            return
        self.log_problem = text
        log.error("%s", text)
        if self.runner.turn is not None:
            self.runner.turn.view.error(text)

    # -- restore -----------------------------------------------------------------------------
    def restore(self) -> None:
        """Resume: fold the old log back into state (markers, history, cost); decisions that
        were pending when the old kernel died are logged as expired (their callback is gone);
        the mode the session was in (plan mode too) is the one the CLI restarts in."""
        s = self.s
        source = find_session_log(s.session_id, self.log_dir)
        self.log = EventLog(self.log_dir / f"{s.session_id}.jsonl")
        if source is None:
            return
        try:
            old = read_events(source)
        except (OSError, LogError) as e:
            raise OptionError(f"cannot resume {s.session_id}: {e}") from None
        self.resumed_from = s.session_id
        s.restore(old)
        st = s.state
        if st.mode in ALL_MODES:
            self.resume_mode = self.modes.restored(st.mode)
        for dec_id in list(st.pending):
            s.emit(KINDS[st.decisions[dec_id].kind].expired_event(dec_id))
        self.runner.agents.end_all(wording.KERNEL_STOPPED_AGENTS)  # they died with the old CLI
        if st.working:  # the old kernel died in the middle of a turn
            s.emit(ev.TurnEnded(turn=st.turns, result="restarted", is_error=True,
                                message=wording.KERNEL_STOPPED))

    # -- the owner task ----------------------------------------------------------------------
    async def run(self) -> None:
        """The owner task: start, serve, and always stop."""
        try:
            await self.start()
            self.reader = asyncio.get_running_loop().create_task(self.read())
            self.idle.start_watching()
            await self.idle.serve()
        except asyncio.CancelledError:
            pass
        except Exception as e:  # the CLI could not start: say why, keep the kernel usable
            log.debug("session %s failed to start", self.s.name, exc_info=True)
            self.s.die(wording.start_failure(e, self.stderr, self.s.options.cli_path))
        finally:
            if self.reader is not None:
                self.reader.cancel()
            await self.stop()

    async def start(self) -> None:
        s, o = self.s, self.s.options
        if self.log is None:  # first: a log folder that cannot be used fails before anything
            self.log = EventLog(self.log_dir / f"{s.session_id}.jsonl")
        env = await self._environment()
        factory = await self._factory()
        s.emit(ev.SessionStarted(
            session_id=s.session_id, name=s.name, cwd=o.cwd or os.getcwd(),
            resting_mode=o.mode, model=o.model, plan_model=o.plan_model,
            resumed_from=self.resumed_from, scripted=o.scripted))
        host = s.host_tools
        self.client = factory(ClientConfig(
            cwd=o.cwd or os.getcwd(), mode=self.resume_mode or o.mode, can_use_tool=self.gate,
            env=env, model=o.model, resume=o.resume or None, cli_path=o.cli_path,
            session_id=None if o.resume else s.session_id, stderr=self.stderr.append,
            file_checkpointing=o.checkpointing,
            max_budget_usd=budget_left(o.max_budget_usd, s.state.cost_usd),
            disallowed_tools=o.denied_tools, agent_options=o.agent,
            **(_host_config(host, self.gate.screen) if host is not None else {})))
        await asyncio.wait_for(self.client.connect(), o.connect_timeout)
        self.connected.set()
        await self._connected_now(self.resume_mode or o.mode, "resume" if o.resume else "start")

    async def _connected_now(self, mode: str, source: ModeSource) -> None:
        """The CLI is up: its mode is in force; a mode asked for meanwhile is applied now."""
        s = self.s
        s.emit(ev.PlanMode(mode=mode, state="effective", source=source))
        want = s.state.requested_mode
        if want and want != s.options.mode:
            await self.modes.apply(want, "user")
        s.notify()

    async def _environment(self) -> dict[str, str]:
        """The CLI's extra environment: the scripted model's endpoint, or real credentials."""
        o = self.s.options
        env: dict[str, str] = dict(o.env)
        require_credentials(o.scripted, env)
        private_config_dir(env)  # transcripts and plan files: the user's alone
        self.scratch = ScratchDir()
        env.update(self.scratch.env())
        for key, value in TASK_TOOLS_ENV.items():
            if key not in env and key not in os.environ:
                env[key] = value
        if o.scripted:
            from ..scripted import ScriptedModel

            requests = self.log_dir / f"{self.s.session_id}.requests.jsonl"
            self.scripted = await ScriptedModel.astart(o.scripted, log_path=requests,
                                                        cwd=o.cwd)
            env.update(self.scripted.env())
        self.cli_env = {**os.environ, **env}
        return env

    async def _factory(self) -> ClientFactory:
        if self.factory is not None:
            return self.factory
        sdk_import, self._sdk_import = self._sdk_import, None
        if sdk_import is not None:
            await sdk_import
        from . import sdk

        return sdk.SdkClient

    async def read(self) -> None:
        """The reader task: every signal from the CLI goes to the session, in order."""
        assert self.client is not None
        s = self.s
        try:
            async for signal in self.client.signals():
                try:
                    self.runner.on_signal(signal)
                except Exception:  # a message we cannot show must not kill the session
                    log.exception("could not handle %s", type(signal).__name__)
            reason = wording.CLI_EXITED
        except asyncio.CancelledError:
            return
        except Exception as e:  # the CLI's stream broke: the session dies, and says why
            log.debug("session %s: reading the CLI failed", s.name, exc_info=True)
            reason = wording.start_failure(e, self.stderr, s.options.cli_path)
        if not s.closed:
            s.die(reason)

    async def stop(self) -> None:
        s = self.s
        runner = self.runner
        self.decision_list.end_open("close" if s.closed else "cli")
        runner.agents.end_all(wording.CLOSED_AGENTS if s.closed else wording.CLI_EXITED_AGENTS)
        own = runner.cli_turn
        if own is not None and own.origin != "user":
            runner.end(own, None, wording.CLOSED_DURING_TURN)
        if self.log is not None:
            # first: nothing more is logged (a late event takes the lock again for itself), and
            # the next writer (a resume in this kernel or another) need not wait for the CLI's
            # exit, which took 1.5-2 s (a resume right after %claude stop was refused)
            self.log.close()
        runner.meter.stop()
        if self.client is not None:
            await _quietly(self.client.disconnect(), "disconnect the CLI", DISCONNECT_TIMEOUT)
        if self.scripted is not None:
            await _quietly(self.scripted.astop(), "stop the scripted model")
        if self.scratch is not None:
            self.scratch.remove()
        runner.drop_queued(s.dead or "the session was closed")
        s.notify()

    def ended(self, reason: str) -> None:
        """The CLI is gone (the session is dead for ``reason``): end what waits on it."""
        runner = self.runner
        self.s.emit(ev.ErrorEvent(kind="session_dead", message=reason))
        self.decision_list.end_open("cli", expire=True)
        runner.agents.end_all(wording.CLI_EXITED_AGENTS)
        for turn in (runner.turn, runner.cli_turn):
            if turn is not None:
                runner.end(turn, None, f"The session ended: {reason}")
        runner.stop()
        self.s.notify()

    @property
    def pid(self) -> int | None:
        return self.client.pid if self.client is not None else None


def _host_config(host: HostTools, screen: ScreenCallback) -> dict[str, Any]:
    """The client's settings for the kernel's tools: the MCP server, the system prompt's
    addition, and the screen that keeps edits off the open notebook's file."""
    return {"tools": host.tools, "tool_server": host.server,
            "system_prompt_append": host.prompt,
            "screen": screen if host.notebook else None,
            "screened_tools": tuple(sorted(EDIT_TOOLS)) if host.notebook else ()}


async def _quietly(aw: Any, what: str, timeout: float | None = None) -> None:
    """Await a clean-up step; a failure is logged, never raised (the session is ending)."""
    try:
        await asyncio.wait_for(aw, timeout)
    except BaseException as e:  # noqa: BLE001 - ending: a CancelledError must not escape here
        log.debug("could not %s: %r", what, e)
