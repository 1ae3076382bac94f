"""The notebook's own functions as tools: ``@plan_widgets.tool``.

::

    @plan_widgets.tool
    def revenue(region: str, year: int = 2024) -> float:
        "Total revenue of a region in a year, from the loaded sales table."
        ...

    @plan_widgets.tool(changes=True)
    def save_report(path: str) -> str:
        "Write the report to a file."

The schema comes from the type hints (pydantic), the description from the docstring. The
kernel tools' in-process server serves each as ``mcp__kernel__<name>``. A tool that only
reads (the default) is allowed in every mode, plan mode too; one declared ``changes=True``
asks on a card first, as ``run_code`` does, and is refused in plan mode (the gate's rule for
the kernel's tools). The call runs in a thread under a time bound (:mod:`budget`: the kernel's
loop stays free, a Python loop that hangs is stopped), its result is text (a figure: a PNG
image), secrets redacted and size-capped as the kernel tools' results are. A failure is one
line for the agent; the turn goes on.

The function is looked up by name at each call: redefining it in a later cell (decorated
again) changes what the next call runs. A tool added, or one whose description or schema
changed, reaches the CLI at the session's next cell: an idle CLI restarts on the same
conversation with the new list (``obtain._new_tools``); a busy one takes it at its next
start (``%claude tools`` says which tools a session does not have yet).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import io
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ...agent.seam import ToolFailure, ToolSpec
from ...model.errors import OptionError
from . import budget
from .inspection import clip, finish

F = TypeVar("F", bound=Callable[..., Any])
SECONDS = 30.0
"""The time bound of one call of a notebook function."""
RESERVED = ("list_variables", "inspect_variable", "read_history", "run_code", "propose_cell")


@dataclass(frozen=True)
class UserTool:
    name: str
    fn: Callable[..., Any]
    description: str
    schema: dict[str, Any]
    changes: bool
    model: Any
    """The pydantic model the agent's input is validated with."""


_tools: dict[str, UserTool] = {}


@overload
def tool(fn: F) -> F: ...
@overload
def tool(*, changes: bool = False, name: str | None = None) -> Callable[[F], F]: ...


def tool(fn: Any = None, *, changes: bool = False, name: str | None = None) -> Any:
    """Make a notebook function a tool the agent can call (``changes=True``: it changes
    something, so each call is approved on a card and refused in plan mode)."""
    def register(f: F) -> F:
        t = _make(f, name or f.__name__, changes)
        _tools[t.name] = t
        return f

    return register(fn) if fn is not None else register


def _make(fn: Callable[..., Any], name: str, changes: bool) -> UserTool:
    import pydantic

    if not callable(fn):
        raise OptionError(f"@plan_widgets.tool: {fn!r} is not a function")
    if name in RESERVED:
        raise OptionError(f"@plan_widgets.tool: {name!r} is a kernel tool's name; give "
                          "another with @plan_widgets.tool(name=...)")
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve: taken as Any
        hints = {}
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    model = pydantic.create_model(f"{name}_input", **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    doc = inspect.getdoc(fn) or f"The notebook function {name}."
    return UserTool(name, fn, " ".join(doc.split())[:1000], schema, changes, model)


def listed() -> list[UserTool]:
    return sorted(_tools.values(), key=lambda t: t.name)


def specs() -> tuple[ToolSpec, ...]:
    """The notebook's tools as the kernel tools' server serves them."""
    return tuple(ToolSpec(t.name, t.description, t.schema, _handler(t.name),
                          changes_state=t.changes, title=f"Run the notebook function {t.name}?")
                 for t in listed())


def _handler(name: str) -> Callable[[dict[str, Any]], Any]:
    async def handle(args: dict[str, Any]) -> Any:
        t = _tools.get(name)
        if t is None:
            raise ToolFailure(f"the notebook no longer defines the tool {name}")
        return await call(t, args)

    return handle


async def call(t: UserTool, args: dict[str, Any]) -> Any:
    """Run ``t`` with the agent's input; a failure is one line (a :class:`ToolFailure`)."""
    import pydantic

    try:
        kwargs = dict(t.model.model_validate(args))
    except pydantic.ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "input"
        raise ToolFailure(f"{t.name}: {where}: {first.get('msg')}") from None
    if inspect.iscoroutinefunction(t.fn):
        try:
            value = await asyncio.wait_for(t.fn(**kwargs), SECONDS)
        except asyncio.TimeoutError:
            raise ToolFailure(f"{t.name} timed out after {SECONDS:g} s") from None
        except Exception as e:
            raise ToolFailure(_raised(t.name, e)) from None
        return result(value)
    got = await budget.call(lambda: t.fn(**kwargs), SECONDS)
    if got.refused:
        raise ToolFailure(f"{t.name} was not called: {got.refused}")
    if got.timed_out:
        raise ToolFailure(f"{t.name} timed out after {SECONDS:g} s (stopped; the kernel goes on)")
    if got.error is not None:
        raise ToolFailure(_raised(t.name, got.error))
    return result(got.value)


def _raised(name: str, e: BaseException) -> str:
    return finish(f"{name} raised {type(e).__name__}: {clip(' '.join(str(e).split()), 500)}")


def result(value: Any) -> Any:
    """What the agent reads: a figure as a PNG image, anything else as text (redacted,
    bounded)."""
    png = _png(value)
    if png is not None:
        return {"image": base64.b64encode(png).decode(), "mime": "image/png"}
    try:
        text = value if isinstance(value, str) else repr(value)
    except Exception as e:  # an unprintable value
        text = f"(the result could not be shown: {type(e).__name__})"
    return finish(text)


def _png(value: Any) -> bytes | None:
    savefig = getattr(value, "savefig", None) or getattr(
        getattr(value, "figure", None), "savefig", None)
    if not callable(savefig):
        return None
    buf = io.BytesIO()
    try:
        savefig(buf, format="png", dpi=80)
    except Exception:
        return None
    return buf.getvalue()
