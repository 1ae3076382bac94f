"""The words a session shows its user: failures, markers, and a turn's closing line.

Every sentence the agent layer shows (in a cell, a marker, an error line) is written here, so
the wording is consistent and reviewable in one place. What the *model* is told (refusals,
"no answer came") lives beside the rule that sends it (the gate, the decisions). Plain text:
the render path escapes it.
"""

from __future__ import annotations

import asyncio
import errno
import re
from collections.abc import Iterable

from ..model.errors import PlanWidgetsError
from ..scripted._script import ScriptError
from .mode_names import mode_title
from .signals import TurnResult

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_EXIT_CODE = re.compile(r"exit code:? (-?\d+)")
_API_FAILURES = {429: "rate limited", 500: "server error", 529: "overloaded"}


def short(text: str, limit: int = 240) -> str:
    """One line: the first sentences of ``text`` up to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def stderr_tail(lines: Iterable[str]) -> str:
    """The CLI's last few stderr lines, as one line (colour codes removed)."""
    useful = [_ANSI.sub("", ln).strip() for ln in lines]
    useful = [ln for ln in useful if ln]
    return " ".join(useful[-3:])[-400:]


def start_failure(e: BaseException, stderr: Iterable[str], cli_path: str | None = None) -> str:
    """Why a session could not start or died, naming the real cause (and the CLI, when it is
    not the bundled one)."""
    cli = f"the Claude Code CLI ({cli_path})" if cli_path else "the Claude Code CLI"
    if isinstance(e, ScriptError):  # the scripted model's file, not the CLI
        return f"the scripted model cannot start: {e}"
    if isinstance(e, PlanWidgetsError):
        return str(e)
    if _out_of_descriptors(e):
        return (f"cannot start {cli}: no file descriptor left (too many open files); close "
                "some sessions or files, or raise the limit (ulimit -n) and restart the kernel")
    if isinstance(e, asyncio.TimeoutError):
        return f"{cli} did not start in time"
    tail = stderr_tail(stderr)
    if tail:  # the CLI's own reason beats the SDK's "Command failed with exit code 1"
        return f"{cli} exited: {tail}"
    code = getattr(e, "exit_code", None)
    said = _EXIT_CODE.search(str(e))  # "Cannot write to terminated process (exit code: 1)"
    if not isinstance(code, int) and said:
        code = int(said.group(1))
    if isinstance(code, int) and code < 0:  # e.g. killed by the OOM killer or by hand
        return f"{cli} exited: killed by signal {-code}"
    if isinstance(code, int):
        return f"{cli} exited with code {code}"
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return f"{cli} failed: {_ANSI.sub('', text)}"


def _out_of_descriptors(e: BaseException | None) -> bool:
    """Whether ``e`` (or what caused it) is "too many open files" (EMFILE, ENFILE)."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.EMFILE, errno.ENFILE):
            return True
        if "Too many open files" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


def with_stderr(reason: str, stderr: Iterable[str]) -> str:
    """``reason``, followed by the CLI's last words if they add something."""
    tail = stderr_tail(stderr)
    return f"{reason} ({tail})" if tail and tail not in reason else reason


REFUSED_ONLY = "[auto_mode_unchecked]"
"""The CLI's tag on a result error that only lists actions it refused (measured, CLI 2.1.337:
"Auto mode could not check some actions Claude tried, so they did not run: Bash. …
[auto_mode_unchecked]", on a plan-mode turn whose model went on to reply)."""


def refusals_only(error: str) -> bool:
    """Whether a turn's error line says only that the CLI refused some actions."""
    parts = error.removeprefix("The turn failed: ").split("; ")
    return all(REFUSED_ONLY in p for p in parts)


def result_error(r: TurnResult) -> str:
    """A failed turn's end, in one line."""
    detail = (r.result or "").strip()
    if r.subtype == "error_during_execution" and (
        r.terminal_reason in ("aborted_streaming", "aborted_tools") or not (detail or r.errors)
    ):
        return INTERRUPTED
    detail = " ".join(detail.split())
    api = detail[len("API Error"):].lstrip(": ") if detail.startswith("API Error") else None
    if r.api_error_status:
        label = _API_FAILURES.get(r.api_error_status, "error")
        return (f"The model API failed: HTTP {r.api_error_status} ({label}): "
                f"{short(api or detail)}")
    if api is not None:
        low = api.lower()
        if "streamtruncated" in low or "stream_truncated" in low:
            return "The model API failed: the response stream was cut off halfway."
        if "econnrefused" in low or "connection refused" in low:
            return "The model API could not be reached: connection refused."
        return f"The model API failed: {short(api)}"
    if r.errors:
        return "The turn failed: " + short("; ".join(r.errors))
    return f"The turn failed ({r.subtype}): {short(detail)}".rstrip(": ")


def turn_summary(duration_ms: int | None, tokens_in: int, tokens_out: int,
                 turn_cost: float | None, session_cost: float, waited_s: float = 0.0) -> str:
    """A turn's closing line: duration, tokens, and its cost beside the session's total.

    The CLI's duration counts the time its cards waited for the person: a turn whose model
    work took under a second read "✓ 43.9 s" (issue 42, point 8), so the agent looked slow.
    A turn that waited says the two apart: "0.8 s working · 43.1 s on your decisions"."""
    took = None
    if duration_ms is not None:
        waited = min(max(waited_s, 0.0), duration_ms / 1000)
        took = (f"{duration_ms / 1000 - waited:.1f} s working · {waited:.1f} s on your decisions"
                if waited >= 0.05 else f"{duration_ms / 1000:.1f} s")
    parts = [took, f"{tokens_in:,} in / {tokens_out:,} out tokens"]
    if turn_cost is not None:
        parts.append(f"${turn_cost:.4f} (session ${session_cost:.4f})")
    return " · ".join(p for p in parts if p)


def mode_marker(before: str | None, after: str, by_model: bool) -> str:
    """A turn's marker for a confirmed mode change, in the names the bar's marker uses
    ("Mode: Plan → Manual")."""
    return f"Mode: {mode_title(before)} → {mode_title(after)}" + (
        " (the agent entered plan mode)" if by_model and after == "plan" else "")


def plan_work_done(back: str) -> str:
    """The marker of the turn that ends the work of a plan approved for this plan only."""
    return f"The plan's work is done: back to {mode_title(back)} (approved for this plan only)"


def plan_work_left(back: str) -> str:
    """A prompt sent while the work of a plan approved for this plan only goes on in the
    background: it runs in the resting mode."""
    return (f"Back to {mode_title(back)} for this prompt: the plan's mode was for that plan "
            "only (its background work goes on)")


def model_marker(before: str, after: str, why: str) -> str:
    return f"Model: {before} → {after} ({why})"


INTERRUPTED = "Interrupted."
HANDED_OVER = "handed its plan over to a new conversation"
"""A planning turn's closing words when its plan was approved to start fresh (the CLI ends it
as interrupted: agent/handoff.py)."""
AGENT_ENTERED_PLAN = "The agent entered plan mode"
EMPTY_PLAN = "The agent presented an empty plan; asked it to write one"
CLOSED_BEFORE_RUN = "the session was closed before this prompt ran"
CLOSED_DURING_TURN = "the session was closed during this turn"
KERNEL_STOPPED = "the kernel stopped before this turn ended"
CLI_EXITED = "the Claude Code CLI exited"
INTERRUPTED_STARTING = ("Interrupted while the session was starting: nothing was sent; run the "
                        "cell again.")
NOTEBOOK_WRITE_REFUSED = "Refused a direct write to the open notebook (propose a cell instead)"


def plan_refused(tool: str) -> str:
    return f"Plan mode refused {tool} (nothing changes before approval)"


def card_failed(kind: str, error: BaseException, name: str) -> str:
    return (f"Could not show the {kind} card ({error}); decide in code: "
            f"plan_widgets.get({name!r}).pending")


def not_run(reason: str) -> str:
    return f"Not run: {reason}."


def plan_refused_no_send(why: str) -> str:
    return f"plan mode was refused ({why}), so this prompt was not sent"


def stopped_answering(e: BaseException) -> str:
    return f"the Claude Code CLI stopped answering ({e})"


SELF_STARTED = "The agent started a turn by itself"
WAITING_BEHIND_SELF_STARTED = ("The agent is answering in a turn of its own (below the newest "
                               "cell); this prompt is sent when it ends")
WAITING_BEHIND_DECISION = "A decision is waiting on a card; this prompt is sent after it"
CLI_EXITED_AGENTS = "stopped: the CLI exited"
CLOSED_AGENTS = "stopped: the session was closed"
KERNEL_STOPPED_AGENTS = "stopped: the kernel stopped"


def agent_finished(description: str, status: str) -> str:
    what = {"completed": "finished", "failed": "failed", "stopped": "was stopped",
            "killed": "was stopped"}.get(status, status)
    return f'Background agent "{description}" {what}'


def unknown_agent(agent_id: str, what: str) -> str:
    return f"The CLI reported {what} of an agent this session does not know ({agent_id})"


def unknown_parent(parent: str) -> str:
    return f"A subagent message came for an Agent call this session does not know ({parent})"


def unmatched_result(origin: str | None) -> str:
    return f"The CLI ended a turn this session did not start (origin: {origin or 'none'})"


def between_cells_card(agent: str | None) -> str:
    """The title above a card that comes after its cell ended. A subagent's card names it
    itself (``Agent "…" asks``): the title does not say it a second time."""
    return "A background agent needs your decision" if agent else "The agent asks"


def injected(kind: str) -> str:
    if kind == "task-notification":
        return "A background agent reported back; the agent reads it in this turn"
    return f"The CLI added a message of its own to this turn ({kind})"


def mode_refused(wanted: str, got: str) -> str:
    """One line: the CLI did not go into the mode an approval asked for (issue 22)."""
    return (f"the CLI did not switch to {mode_title(wanted)} ({wanted}); it is in "
            f"{mode_title(got)} ({got}) now")


def no_such_command(name: str) -> str:
    """A ``/...`` prompt that names no command or skill of the CLI."""
    return (f"/{name} is not a command or skill of this session (%claude commands lists "
            "them): nothing was sent; to send the prompt as text, add --verbatim")


# -- a bad day: retries, fallbacks, compaction, tool servers (docs/cli.md#bad-day) ------------
def _k(tokens: int | None) -> str:
    if tokens is None:
        return "?"
    return f"{tokens / 1000:.0f}k" if tokens >= 10_000 else f"{tokens:,}"


def retry_line(reason: str, attempt: int, max_retries: int | None, seconds_left: float) -> str:
    """The live retry line: ``API overloaded · retrying in 4 s · attempt 2 of 10``."""
    of = f" of {max_retries}" if max_retries else ""
    wait = f"retrying in {max(0, round(seconds_left))} s" if seconds_left >= 0.5 else "retrying now"
    return f"{reason} · {wait} · attempt {attempt}{of}"


def retried_line(times: int, reasons: Iterable[str], seconds: float) -> str:
    """The quiet line a retry leaves in the finished turn: ``retried 3 times: API
    overloaded, 7 s``."""
    said = ", ".join(dict.fromkeys(reasons))
    return f"retried {times} time{'s' if times != 1 else ''}: {said}, {seconds:.0f} s"


def rate_limit_line(status: str, resets_at: float | None, limit_type: str | None) -> str:
    import time

    what = (limit_type or "usage").replace("_", " ")
    state = {"rejected": "reached", "allowed_warning": "nearly reached"}.get(status, status)
    when = ""
    if resets_at:
        left = max(0.0, resets_at - time.time())
        when = f"; resets in {left / 60:.0f} min" if left >= 60 else f"; resets in {left:.0f} s"
    return f"rate limit ({what}) {state}{when}"


def fallback_line(to_model: str | None, from_model: str | None, reason: str | None) -> str:
    """``model fallback: Sonnet answers (Opus overloaded)``, in the CLI's words when it gave
    some."""
    head = f"model fallback: {to_model or 'another model'} answers"
    if from_model:
        head += f" instead of {from_model}"
    return f"{head} ({short(reason, 160)})" if reason else head


def compaction_line(trigger: str, pre: int | None, post: int | None) -> str:
    """``conversation compacted: 152k → 18k tokens, manual``."""
    sizes = f": {_k(pre)} → {_k(post)} tokens" if pre is not None else ""
    return f"conversation compacted{sizes}, {trigger}"


COMPACTING = "compacting the conversation…"


def compact_failed(error: str | None) -> str:
    return f"not compacted: {error or 'the CLI gave no reason'}"


def unknown_message(kind: str, detail: str) -> str:
    return f"the CLI said something this version does not know ({kind})" + (
        f": {short(detail, 160)}" if detail else "")
