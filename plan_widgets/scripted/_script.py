"""The scripted model's script: pydantic-validated YAML or JSON.

A script is a list of steps. Each model request is answered by the first step not yet used
whose ``when`` matches the request (steps with ``repeat: true`` can be used again). A step
either fails (an HTTP status, a broken stream) or replies with blocks: text and tool calls.

.. code-block:: yaml

    steps:
      - when: {mode: plan}
        reply:
          - text: "I'll write the plan first."
          - tool: Write
            input: {file_path: "{plan_file}", content: "# Plan\\n1. create hello.py"}
      - when: {tool_result: "File created"}
        reply:
          - tool: ExitPlanMode
            input: {}
      - when: {tool_result: "approved"}
        reply:
          - tool: Write
            input: {file_path: "{cwd}/hello.py", content: "print('hello')\\n"}
      - reply: [{text: "Done."}]

Placeholders in text and tool input: ``{plan_file}`` (the plan file the CLI named in the
request), ``{cwd}`` (the session's working directory), ``{user}`` (the last user text),
``{tool_result}`` (the last tool result text), and each named group of the step's ``when``
patterns as it matched (``tool_result: '"Which color[^"]*"="(?P<color>[^"]*)"'`` gives
``{color}``: the reply says what the person picked). Write ``{{`` and ``}}`` for literal braces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..model.errors import PlanWidgetsError


class ScriptError(PlanWidgetsError, ValueError):
    """The script cannot be read; the message says where and why."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class When(_Strict):
    """Conditions on a request; every one given must hold (regular expressions, searched)."""

    user: str | None = None
    """The last user message's own text (not tool results, not system reminders)."""
    tool_result: str | None = None
    """The text of the tool results in the last user message."""
    context: str | None = None
    """Anywhere in the conversation sent (all messages)."""
    notification: str | None = None
    """A background agent's notification in the last user message (the CLI sends it inside
    a system reminder: ``<task-notification>`` with status, summary and result)."""
    mode: Literal["plan", "default"] | None = None
    """``plan`` while the CLI says plan mode is active, ``default`` otherwise."""
    model: str | None = None
    """The model the request names."""
    summary: bool = False
    """True: this step answers the CLI's summary request (``/compact``, or compaction when
    the context fills; docs/cli.md#bad-day); steps without it never do. A summary request
    no step answers gets :attr:`Script.summary`."""

    @field_validator("user", "tool_result", "context", "model", "notification")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"not a regular expression ({e})") from None
        return v


class Block(_Strict):
    """One reply block: ``text`` (optionally generated or split), ``thinking`` (streamed as
    thinking deltas, signed) or a ``tool`` call."""

    text: str | None = None
    thinking: str | None = None
    text_size: int | None = Field(default=None, gt=0)
    """Generate this many bytes of Markdown text instead of ``text``."""
    deltas: int | None = Field(default=None, gt=0)
    """Stream the text in this many deltas (default: about one per 40 bytes)."""
    tool: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> Block:
        kinds = sum(x is not None for x in (self.text, self.text_size, self.tool, self.thinking))
        if kinds != 1:
            raise ValueError("a block has exactly one of text, text_size, thinking or tool")
        if self.text_size is not None and self.deltas is not None and self.deltas > self.text_size:
            raise ValueError("deltas cannot exceed text_size")
        return self


class Fail(_Strict):
    """Make the request fail: an HTTP error status, or a stream cut after N events."""

    status: int | None = Field(default=None, ge=400, le=599)
    message: str = "scripted failure"
    cut_after_events: int | None = Field(default=None, ge=0)
    times: int = Field(default=1, ge=1)
    """How many consecutive requests fail before the step is used up."""
    retry_after: float | None = Field(default=None, ge=0, le=600)
    """A ``retry-after`` header (seconds) on a status answer: the CLI waits that long."""
    should_retry: bool | None = None
    """An ``x-should-retry`` header on a status answer (None: ``false`` while the script's
    ``retries`` is 0, else none, and the CLI decides by the status)."""

    @model_validator(mode="after")
    def _one_kind(self) -> Fail:
        if (self.status is None) == (self.cut_after_events is None):
            raise ValueError("fail needs exactly one of status or cut_after_events")
        return self


class Step(_Strict):
    when: When = Field(default_factory=When)
    delay: float = Field(default=0.0, ge=0, le=600)
    """Seconds to wait before answering."""
    reply: list[Block] = Field(default_factory=list)
    fail: Fail | None = None
    repeat: bool = False
    """Keep the step for later requests instead of using it up."""
    stop_reason: Literal["end_turn", "max_tokens"] | None = None
    interval: float = Field(default=0.0, ge=0, le=10)
    """Seconds between streamed events (0: send the reply at once)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers on the reply (e.g. ``anthropic-ratelimit-unified-status``)."""
    input_tokens: int | None = Field(default=None, gt=0)
    """The input tokens the reply reports (a full context: 995000 makes the CLI compact the
    conversation by itself before its next request; docs/cli.md#bad-day)."""

    @model_validator(mode="after")
    def _reply_or_fail(self) -> Step:
        cut = self.fail is not None and self.fail.cut_after_events is not None
        if (not self.reply and self.fail is None) or (self.reply and self.fail and not cut):
            raise ValueError("a step has exactly one of reply or fail (a cut stream may have "
                             "a reply too: the part sent before the cut)")
        return self


class Script(_Strict):
    steps: list[Step] = Field(min_length=1)
    fallback: str = "(scripted model: no step matches this request)"
    """Text answered when no step matches."""
    retries: int = Field(default=0, ge=0, le=10)
    """How many times the CLI retries a failed request (``CLAUDE_CODE_MAX_RETRIES``; 0, the
    default, makes every failure surface at once)."""
    summary: str = "The conversation so far (a scripted summary)."
    """The answer to the CLI's summary request (compaction) when no step answers it: sent as
    ``<analysis>…</analysis><summary>SUMMARY</summary>``, as the CLI asks."""


def load_script(source: str | Path | dict[str, Any]) -> Script:
    """Read and validate a script from a file path or a mapping."""
    if isinstance(source, dict):
        data: Any = source
        where = "script"
    else:
        path = Path(source)
        where = str(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ScriptError(f"{where}: cannot read ({e.strerror or e})") from None
        try:
            data = json.loads(raw) if path.suffix == ".json" else yaml.safe_load(raw)
        except (yaml.YAMLError, json.JSONDecodeError) as e:
            mark = getattr(e, "problem_mark", None)
            problem = getattr(e, "problem", None)
            if mark is not None and problem:
                first = f"line {mark.line + 1}: {problem}"
            else:
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise ScriptError(f"{where}: not valid YAML/JSON ({first})") from None
    if isinstance(data, list):
        data = {"steps": data}
    try:
        return Script.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        msg = " ".join(str(err["msg"]).split())
        raise ScriptError(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}") from None


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*)\}")
_BUILTIN = ("plan_file", "cwd", "user", "tool_result")


def fill(value: Any, names: dict[str, str]) -> Any:
    """Replace placeholders in every string inside ``value``."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            tok = m.group(0)
            if tok == "{{":
                return "{"
            if tok == "}}":
                return "}"
            name = m.group(1)
            if name in names:
                return names[name]
            return "" if name in _BUILTIN else tok  # an unknown name stays as written

        return _PLACEHOLDER.sub(sub, value)
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    return value
