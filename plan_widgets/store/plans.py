"""The project's plans, kept: every plan a session proposes, as its own file, never overwritten.

MEASURED (CLI 2.1.332 through claude-agent-sdk 0.2.189, scripted model, a scratch HOME): the
CLI keeps ONE plan file per conversation, ``~/.claude/plans/<slug>.md`` (the slug from the
prompt and two random words, e.g. ``add-a-greeting-sharded-cherny.md``), and a revision after
Keep planning rewrites that same file: the first plan is gone, and the file says nothing of
what became of it. Its ``plansDirectory`` setting (relative to the project, the folder must
exist) only moves that one file: the model was told to write ``<project>/plansdir/<slug>.md``.
So the CLI's files cannot be the record; they are named in each kept plan (``plan_file``), and
``plansDirectory`` is left to the user.

Here, in ``<log dir>/plans/`` (beside the session logs, and as private), each plan is:

- ``<id>.md``: the text the agent proposed, written once (``O_EXCL``), never rewritten;
- ``<id>.approved.md``: the text approved, when the user edited it (written once);
- ``<id>.json``: its record (:class:`KeptPlan`: status, session, times, ...), replaced whole
  (a temporary file, then ``os.replace``) when the status changes: a reader sees the old
  record or the new one, never half of one.

The id is the plan decision's (12 hex digits, random), so a plan keeps its id in the session's
event log, in ``%claude plans`` and in ``%%claude --from-plan``. Only the session that
proposed a plan writes its record (and a session that carries it out adds itself to
``carried_out_in``).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..model.errors import OptionError
from ..model.state import DecisionRecord
from .lock import FILE_MODE

STATUSES = ("proposed", "sent back", "approved", "handed over", "superseded", "expired",
            "cancelled")
"""What became of a plan: waiting for a decision (``proposed``), sent back with Keep
planning, approved, approved to start fresh (``handed over``: it went on in a new
conversation), ``superseded`` (a later plan came before it was decided), or left undecided
when its session ended (``expired``) or its turn was interrupted (``cancelled``)."""
_OUTCOMES = {"approved": "approved", "rejected": "sent back", "expired": "expired",
             "cancelled": "cancelled"}


def plans_dir(log_dir: str | os.PathLike[str]) -> Path:
    """Where a project's plans are kept: ``plans/`` in its session log folder."""
    return Path(log_dir) / "plans"


def status_of(d: DecisionRecord, handed_over: bool = False) -> str:
    """A plan decision's status, in :data:`STATUSES`' words."""
    if handed_over and d.status == "approved":
        return "handed over"
    if d.status == "pending":
        return "superseded" if d.superseded else "proposed"
    return _OUTCOMES.get(d.status, d.status)


@dataclass(frozen=True)
class KeptPlan:
    """One kept plan's record (``<id>.json``); its texts are files beside it."""

    id: str
    session_id: str
    session: str
    """The session's name (``default``, or ``--session NAME``)."""
    status: str
    proposed: float | None
    decided: float | None = None
    turn: int = 0
    cwd: str | None = None
    revises: str | None = None
    """The plan it revises (the one before it, sent back with Keep planning)."""
    mode_after: str | None = None
    feedback: str | None = None
    edited: bool = False
    plan_file: str | None = None
    """The CLI's own plan file when it was proposed (rewritten by the CLI since, maybe)."""
    carried_out_in: tuple[str, ...] = ()
    """Sessions started on it (``%%claude --from-plan``, or Approve, start fresh)."""
    folder: Path = field(default=Path("."), compare=False)

    @property
    def text(self) -> str:
        """The plan in force: the text approved (the user's edit), else the one proposed."""
        approved = self.folder / f"{self.id}.approved.md"
        return _read(approved) if self.edited and approved.is_file() else self.proposed_text

    @property
    def proposed_text(self) -> str:
        return _read(self.folder / f"{self.id}.md")

    @property
    def title(self) -> str:
        """Its first non-blank line, without Markdown's heading marks (for lists)."""
        for line in self.proposed_text.splitlines():
            if line.strip():
                return line.strip().lstrip("#").strip()[:120]
        return "(empty plan)"

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("folder")
        out["carried_out_in"] = list(self.carried_out_in)
        return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _write_once(path: Path, text: str) -> None:
    """Write ``path`` unless it exists (a kept text is never rewritten)."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)


def _replace(path: Path, data: dict[str, Any]) -> None:
    """Write ``path`` whole, atomically (a reader never sees half a record)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def keep(folder: Path, d: DecisionRecord, *, session_id: str, session: str,
         cwd: str | None, handed_over: bool = False) -> KeptPlan:
    """Keep plan decision ``d`` of a session: its texts once, its record as it is now."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    proposed = d.proposed_plan if d.edited and d.proposed_plan is not None else d.plan
    _write_once(folder / f"{d.id}.md", proposed or "")
    if d.edited and d.plan is not None:
        _write_once(folder / f"{d.id}.approved.md", d.plan)
    old = load(folder, d.id)
    # (a session that started fresh goes on under a new id: the plan keeps its session's)
    kept = KeptPlan(
        id=d.id, session_id=old.session_id if old is not None else session_id,
        session=session, status=status_of(d, handed_over),
        proposed=d.ts_asked, decided=d.ts_decided, turn=d.turn, cwd=cwd, revises=d.revises,
        mode_after=d.mode_after, feedback=d.feedback, edited=d.edited, plan_file=d.plan_file,
        carried_out_in=old.carried_out_in if old is not None else (), folder=folder)
    if kept != old:
        _replace(folder / f"{d.id}.json", kept.record())
    return kept


def carried_out(folder: Path, plan_id: str, session_id: str) -> None:
    """Add ``session_id`` to the sessions started on kept plan ``plan_id`` (if it is kept)."""
    old = load(folder, plan_id)
    if old is not None and session_id not in old.carried_out_in:
        _replace(folder / f"{plan_id}.json", replace(
            old, carried_out_in=(*old.carried_out_in, session_id)).record())


def load(folder: Path, plan_id: str) -> KeptPlan | None:
    """The record of kept plan ``plan_id`` (None: none, or unreadable)."""
    try:
        data = json.loads((folder / f"{plan_id}.json").read_text(encoding="utf-8"))
        data["carried_out_in"] = tuple(data.get("carried_out_in") or ())
        return KeptPlan(**data, folder=folder)
    except (OSError, ValueError, TypeError):
        return None


def kept_plans(folder: Path) -> list[KeptPlan]:
    """Every kept plan in ``folder``, newest first."""
    try:
        names = [p.name[:-5] for p in folder.iterdir()
                 if p.suffix == ".json" and not p.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [k for k in (load(folder, n) for n in names) if k is not None]
    found.sort(key=lambda k: (k.proposed or 0.0, k.id), reverse=True)
    return found


def find_plan(plans: Iterable[KeptPlan], prefix: str) -> KeptPlan | None:
    """The kept plan whose id is ``prefix``, or the one whose id starts with it (None: none;
    several raise :class:`OptionError` naming them)."""
    found = [k for k in plans if k.id.startswith(prefix)] if prefix else []
    exact = [k for k in found if k.id == prefix]
    if exact or len(found) == 1:
        return (exact or found)[0]
    if found:
        ids = ", ".join(k.id for k in found[:6]) + (", ..." if len(found) > 6 else "")
        raise OptionError(f"{prefix!r} matches {len(found)} kept plans: {ids} "
                          "(give more of the id)")
    return None


def status_word(text: str) -> str:
    """A status as a flag gives it (``sent-back``, ``Sent back``): its word, or
    :class:`OptionError` naming the choices."""
    word = " ".join(text.replace("-", " ").replace("_", " ").lower().split())
    if word not in STATUSES:
        choices = ", ".join(s.replace(" ", "-") for s in STATUSES)
        raise OptionError(f"no plan status {text!r} (one of: {choices})")
    return word
