"""Rewind a turn's files: the CLI's file checkpoints (docs/cli.md#checkpoints).

Each prompt is sent with our own uuid (``TurnStarted.message_id``), which the CLI takes as the
message's id and as its checkpoint's id. Rewinding to it puts every file the CLI tracks back as
it was when that prompt was sent: what that turn's and every later turn's Write/Edit tools
changed. Files those turns created are deleted (the folders they made stay, empty); what
``Bash`` did is not tracked and stays. A rewind can itself be rewound forward (checkpoints are
states, not one-shot undos), and the conversation goes on as it was.

Before asking for confirmation, the files are listed: by the CLI's own dry run when the client
can ask for one (``exact``), else by the Write/Edit calls of the turns concerned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import model as ev
from ..model.errors import OptionError, SessionError
from .ports import SessionPort

NOT_TRACKED = ("Only what the agent's Write and Edit tools changed is put back (its plan file "
               "too); files the turns created are deleted, and changes made by shell commands "
               "stay.")


@dataclass(frozen=True)
class RewindPlan:
    """What a rewind to the start of ``turn`` changes (or changed)."""

    turn: int
    message_id: str
    files: tuple[str, ...] = ()
    insertions: int | None = None
    deletions: int | None = None
    exact: bool = False
    """True: the CLI's own dry run listed the files; False: the turns' Write/Edit calls."""
    done: bool = False
    """True once the files were rewound."""
    notes: tuple[str, ...] = field(default=())

    @property
    def summary(self) -> str:
        """One line: how many files, and the lines changed if known."""
        n = len(self.files)
        text = f"{n} file{'s' if n != 1 else ''}"
        if self.insertions is not None or self.deletions is not None:
            text += f" (+{self.insertions or 0} −{self.deletions or 0} lines)"
        return text


class RewindHost(SessionPort, Protocol):
    """What a rewind needs of its session besides the shared port: its logged events, and
    whether a turn runs now."""

    @property
    def events(self) -> list[ev.Event]: ...
    @property
    def current_turn(self) -> Any: ...


class Rewinder:
    """A session's rewinds: find a turn's checkpoint, list what changes, put files back."""

    def __init__(self, session: RewindHost) -> None:
        self.s = session

    # -- which turn ------------------------------------------------------------------------
    def turns_with_files(self) -> dict[int, list[str]]:
        """Turn number -> the files its Write/Edit tools changed (turns that changed any)."""
        out: dict[int, list[str]] = {}
        for e in self.s.events:
            if e.type == "turn:ended" and e.files:
                out[e.turn] = list(e.files)
        return out

    def _message_id(self, number: int) -> str | None:
        found = None
        for e in self.s.events:
            if e.type == "session:started" and e.resumed_from is None:
                found = None  # a fresh session in an old log: its turns are new ones
            if e.type == "turn:started" and e.turn == number:
                found = e.message_id
        return found

    def resolve(self, turn: Any = None) -> tuple[int, str]:
        """The turn number and checkpoint id of ``turn`` (a Turn, a number, or None: the last
        turn that changed files); a wrong one is an OptionError (one line)."""
        if not self.s.options.checkpointing:
            raise OptionError("file checkpointing is off for this session, so its files "
                              "cannot be rewound")
        changed = self.turns_with_files()
        if turn is None:
            if not changed:
                raise OptionError("no turn of this session changed files with Write or Edit")
            number = max(changed)
        else:
            number = int(getattr(turn, "number", turn))
        if number < 1 or number > self.s.state.turns:
            raise OptionError(f"no turn {number}: this session has had {self.s.state.turns}")
        message_id = self._message_id(number)
        if not message_id:
            raise OptionError(f"turn {number} has no file checkpoint (it ran before "
                              "checkpoints were kept)")
        return number, message_id

    def touched_since(self, number: int) -> list[str]:
        """The files Write/Edit changed in turn ``number`` and every turn after it."""
        seen: dict[str, None] = {}
        for t, files in sorted(self.turns_with_files().items()):
            if t >= number:
                seen.update(dict.fromkeys(files))
        return list(seen)

    # -- list, then rewind -------------------------------------------------------------------
    async def preview(self, turn: Any = None) -> RewindPlan:
        """What a rewind to the start of ``turn`` would change; nothing is touched."""
        number, message_id = self.resolve(turn)
        client = self._client()
        try:
            answer = await self.s.control(client.rewind_files(message_id, dry_run=True),
                                          "rewind (dry run)")
        except SessionError as e:
            if not isinstance(e.__cause__, NotImplementedError | AttributeError | TypeError):
                raise
            return RewindPlan(number, message_id, tuple(self.touched_since(number)))
        if not answer.get("canRewind", True):
            raise SessionError(f"turn {number} cannot be rewound: "
                               f"{answer.get('error') or 'the CLI refused'}")
        files = tuple(str(f) for f in answer.get("filesChanged") or ())
        return RewindPlan(number, message_id, files, answer.get("insertions"),
                          answer.get("deletions"), exact=True)

    async def rewind(self, turn: Any = None, *, by: ev.Actor = "code") -> RewindPlan:
        """Put the files back as they were before ``turn``; logs ``files:rewound``."""
        s = self.s
        if s.current_turn is not None or s.pending is not None:
            raise OptionError("a turn is running: rewind its files once it has ended")
        plan = await self.preview(turn)
        client = self._client()
        await s.control(client.rewind_files(plan.message_id), "rewind")
        s.emit(ev.FilesRewound(turn=plan.turn, message_id=plan.message_id,
                               files=list(plan.files), by=by))
        return RewindPlan(plan.turn, plan.message_id, plan.files, plan.insertions,
                          plan.deletions, plan.exact, done=True)

    def _client(self) -> Any:
        s = self.s
        s.check_alive()
        if s.client is None or not s.connected:
            raise SessionError("the session has not started yet: nothing to rewind")
        return s.client
