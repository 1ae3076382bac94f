"""Widget models shared by every card and turn, and closing what a finished view leaves behind.

Every ipywidget comes with a Layout model, and most with a Style model: each one more
``comm_open`` on iopub before the card shows, and one more model in the kernel and the page.
Widgets that keep one of a few looks share one model per look here (a card shows sooner; see
docs/benchmarks.md, figure 2). Shared models are never mutated and never closed.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as w
from IPython.display import display
from ipywidgets.widgets.widget_bool import CheckboxStyle, ToggleButtonStyle
from ipywidgets.widgets.widget_description import DescriptionStyle
from ipywidgets.widgets.widget_string import HTMLStyle

from ..render.look import BORDER, BUTTON, BUTTON_TEXT, CARD_BOX
from .keep_place import KeepPlace
from .typed import TypedBox

# A decision card is one flex box whose lines wrap (render.look.CARD_BOX): a widget on a line
# of its own is "full" width, buttons size to their text, and two "half" fields share a line
# when there is room.
CARD_COLORS: dict[str, str] = {}
"""Each decision kind's colour (its cards' border, live and static), by the decision's kind:
each kind gives its own (widgets/kinds registers them, see :func:`card_color`)."""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
log = logging.getLogger("plan_widgets")


def widget_bundle(widget: w.Widget, **fallbacks: str) -> dict[str, Any]:
    """A display bundle: the widget's view, and what frontends without widgets show instead
    (``text_markdown=``, ``text_plain=``, ... as keyword arguments)."""
    return {WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": widget.model_id},
            **{k.replace("_", "/", 1): v for k, v in fallbacks.items()}}


def soon(fn: Callable[[], Any]) -> None:
    """Run ``fn`` after the current callback (a card or a turn is not closed inside its own
    click); at once when no loop runs (widgets built by hand, in tests)."""
    try:
        asyncio.get_running_loop().call_soon(fn)
    except RuntimeError:
        fn()


def shown_here(bundle: dict[str, Any]) -> Any:
    """Display ``bundle`` in the running cell; returns its handle, which remembers that cell.

    ipykernel 7 sends output with the parent header of the context it is sent from, and
    output sent from a context without one (a thread, a ``call_soon_threadsafe`` or
    ``run_in_executor`` callback) goes to the NEWEST request: after the cell returned, the next
    cell's. An executor keeps each message with the cell its parent names, so an update of
    this display from there would land in another cell (issue 33). :func:`update_display`
    therefore sends every update from the context this display was made in."""
    _count_pages()
    handle = display(bundle, raw=True, display_id=True)
    if handle is not None:
        handle._pw_context = contextvars.copy_context()
        handle._pw_pages = _PAGES[0]
        handle._pw_client = _client()
        handle._pw_heard = _HEARD[0]
    return handle


# -- pages that load a display instead of receiving it (issue 36) -------------------------------
_PAGES = [0]  # widget managers that connected to this kernel since the count began
_CONTROL = "jupyter.widget.control"


def _count_pages() -> None:
    """Count each page (a load, a reload, a second tab) whose widget manager connects: it
    opens ipywidgets' control comm to fetch every model's state (ipywidgets 8). Installed
    once, around ipywidgets' own handler of that comm."""
    from ipywidgets import comm

    manager = comm.get_comm_manager()
    target = None if manager is None else manager.targets.get(_CONTROL)
    if target is None or getattr(target, "_pw_counts", False):
        return

    def opened(comm: Any, msg: Any) -> Any:
        _PAGES[0] += 1
        return target(comm, msg)

    opened._pw_counts = True  # type: ignore[attr-defined]
    manager.register_target(_CONTROL, opened)


_HEARD = [0]  # widget messages heard so far (from any page), the newest one's number
_CLIENTS: dict[str, int] = {}  # a page's client session -> the number of its last message
_HEARING = threading.Lock()  # (a widget message may come on a subshell's thread)


def _client() -> str | None:
    """The client session (one per page's kernel connection) of the request being handled:
    a cell's ``execute_request``, or a widget message (a click) from some page."""
    try:
        from IPython import get_ipython

        parent = get_ipython().kernel.get_parent("shell")
        return str(parent["header"]["session"]) or None
    except Exception:  # no kernel (widgets built by hand, in tests), or no request
        return None


def _heard_from_page() -> None:
    """Note which page a widget message (a click, a change) came from: a page that shows a
    cell's display without having run the cell (issue 36; :func:`loaded_elsewhere`)."""
    client = _client()
    if client is not None:
        with _HEARING:
            _HEARD[0] += 1
            _CLIENTS[client] = _HEARD[0]


def loaded_elsewhere(handle: Any) -> bool:
    """Whether a page may show ``handle``'s display from a copy rather than from the kernel's
    messages: a widget manager connected after it was shown, or a page other than the one
    that ran the cell has sent a widget message (a click) since. Measured (docs/
    cli.md#reload, #collaboration): JupyterLab 4 and Notebook 7 route
    ``update_display_data`` only to the outputs a page RECEIVED with that display id; a
    loaded copy (a reload, a second tab, a collaborator's page, which gets outputs through
    the shared document) keeps its widget view, which goes blank when its model closes. A
    collaborator's page that was open before the cell ran is not counted by its connection
    (it connected before), but by its clicks: if it decided, it shows the display."""
    shown = getattr(handle, "_pw_pages", None)
    if shown is None:
        return False
    if _PAGES[0] > shown:
        return True
    own, since = getattr(handle, "_pw_client", None), getattr(handle, "_pw_heard", 0)
    return any(n > since and client != own for client, n in _CLIENTS.items())


def close_or_keep(box: w.Box, handle: Any, bundle: dict[str, Any]) -> None:
    """Close ``box`` (a display's root widget, static now) and every model under it; or, if
    a page may show it from its file, keep it holding ``bundle`` (:func:`keep_record`),
    which later updates of ``handle`` refresh (:func:`update_display`)."""
    if loaded_elsewhere(handle):
        handle._pw_record = keep_record(box, bundle)
    else:
        close_tree([box])


def keep_record(box: w.Box, bundle: dict[str, Any]) -> w.Output:
    """Turn ``box`` (a display's root widget) into the holder of ``bundle``, the static
    record, in one ``Output``; its other models close. For a display a page may have loaded
    (:func:`loaded_elsewhere`): that page's view of ``box`` then shows the record."""
    record = w.Output(layout=shared("layout"))
    set_record(record, bundle)
    old = box.children
    box.children = (record,)
    close_tree(old)
    return record


def set_record(record: w.Output, bundle: dict[str, Any]) -> None:
    data = {"output_type": "display_data", "data": bundle, "metadata": {}}
    if record.outputs != (data,):
        record.outputs = (data,)


def on_click(button: w.Button, fn: Callable[..., Any]) -> None:
    """``button.on_click(fn)``, with ``fn`` run on the kernel's loop (see :func:`handed`)."""
    in_page_order([button])
    button.on_click(handed(fn))


def on_change(widget: w.Widget, fn: Callable[[dict[str, Any]], Any],
              names: str = "value") -> None:
    """``widget.observe(fn, names)``, with ``fn`` run on the kernel's loop (see :func:`handed`)."""
    in_page_order([widget])
    widget.observe(handed(fn), names)


def _as_sent(_data: Any, default: Any) -> Any:
    return default


def in_page_order(roots: Iterable[w.Widget]) -> None:
    """Have the kernel handle what the page sends to ``roots`` and the widgets under them in
    the order the page sent it: on the shell the page names in each message.

    Why (measured, tests/test_browser_typed.py): ipykernel 7.4 sends a comm's messages from
    the page to the shell its own last message to the page came from (``Comm.
    _reply_subshell_for``), not to the subshell the page names. A card's buttons, made while
    its cell ran, had their clicks handled on the main thread, while the plan's text box
    (made in Edit's click) had its text handled on the widgets' subshell thread: two threads,
    no order between them. A plan retyped and approved at once was approved with part of the
    typing, or none (tour notebook 07: 2 of 9 runs at load 10). JupyterLab 4.6 and Notebook 7.6
    send every widget message of a page over one subshell (``perCommTarget``), in order; here
    each of this package's widgets keeps that order (a kernel without the hook ignores it)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if not isinstance(obj, w.Widget) or id(obj) in seen or _is_shared(obj):
            continue
        seen.add(id(obj))
        if obj.comm is not None:
            obj.comm._reply_subshell_for = _as_sent
        kids = getattr(obj, "children", None) if obj.has_trait("children") else None
        if isinstance(kids, tuple | list):
            stack.extend(kids)


def handed(fn: Callable[..., Any]) -> Callable[..., None]:
    """``fn`` as a widget callback that always runs on the loop it was registered on (the
    kernel's own loop, where every session, decision and view lives): the ONE handoff every
    click and change of this package goes through (``on_click``, ``on_change``;
    tests/test_widget_callbacks.py fails on a callback registered another way).

    Why (measured, docs/cli.md#kernel): JupyterLab 4.6 and Notebook 7.6 send widget messages
    over a kernel subshell by default, and ipykernel 7.4 then runs the handler on that
    subshell's thread, under the subshell's own event loop. A decision resolved there set its
    future from the wrong thread; nothing woke the kernel's loop, and the turn stalled until
    another cell ran. So a callback coming on another thread is handed over with
    ``call_soon_threadsafe`` and the subshell returns at once; on the loop's own thread (no
    subshell, or a frontend that does not use them) it runs at once, as before. Widgets built
    with no loop running (by hand, in tests) run their callbacks where they come."""
    try:
        home: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        owner: int | None = threading.get_ident()
    except RuntimeError:
        home = owner = None

    def callback(*args: Any) -> None:
        _heard_from_page()
        if home is None or threading.get_ident() == owner:
            fn(*args)
        elif home.is_closed():
            log.debug("a widget callback came after the kernel's loop closed: dropped")
        else:
            home.call_soon_threadsafe(_run_logged, fn, args)
    return callback


def _run_logged(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        fn(*args)
    except Exception:  # as ipywidgets does for a click: say it, keep the kernel going
        log.exception("a widget callback failed")


def update_display(handle: Any, bundle: dict[str, Any], what: str) -> None:
    """Show ``bundle`` in ``handle``'s display, as its own cell's output (:func:`shown_here`).
    A frontend channel that is gone (a closed page, a kernel shutting down) must not break
    the decision, turn or session behind it: the failure is logged (``what`` names whose
    display it was) and the caller goes on."""
    ctx = getattr(handle, "_pw_context", None)
    try:
        if ctx is None:
            handle.update(bundle, raw=True)
        else:
            try:
                ctx.run(handle.update, bundle, raw=True)
            except RuntimeError as e:  # only if ctx is entered (an update inside an update)
                if "already entered" not in str(e):
                    raise
                handle.update(bundle, raw=True)
    except Exception:  # whatever the channel raises: the display is lost, the work is not
        log.debug("could not update the %s's display", what, exc_info=True)
    record = getattr(handle, "_pw_record", None)  # (close_or_keep)
    if record is not None:
        set_record(record, bundle)


def _card_layout(color: str) -> Callable[[], w.Widget]:
    return lambda: w.Layout(border=f"2px solid {color}", **CARD_BOX)


def _button_style(color: str) -> Callable[[], w.Widget]:
    """A coloured button's style (render.look.BUTTON: readable in every theme)."""
    return lambda: w.ButtonStyle(button_color=color, text_color=BUTTON_TEXT)


_FACTORIES: dict[str, Callable[[], w.Widget]] = {
    "layout": w.Layout,
    # as wide as its text, never wider than the card (a picker's long choice wraps the line)
    "auto": lambda: w.Layout(width="auto", max_width="100%", min_width="0"),
    # a line of its own: the whole line less the widget's margins (width 100% plus margins
    # stuck out of the card), and allowed to be narrower than a long word in it
    "full": lambda: w.Layout(flex="1 1 100%", min_width="0"),
    # an option's checkbox: a line of its own whose label fills it (one grid column; a flex
    # item would be as wide as its text, and the text's wrapping width is a share of it) and
    # grows with its text
    "option": lambda: w.Layout(flex="1 1 100%", min_width="0", height="auto", display="grid",
                               grid_template_columns="minmax(0, 1fr)"),
    "half": lambda: w.Layout(flex="1 1 240px"),
    "bar": lambda: w.Layout(align_items="center", flex_flow="row wrap"),
    # Rewind files' confirmation: a card of its own line in the control bar
    "card-rewind": lambda: w.Layout(border=f"2px solid {BORDER['rewind']}", flex="1 1 100%",
                                    min_width="0", **CARD_BOX),
    "hidden": lambda: w.Layout(display="none"),
    "keep-place": lambda: KeepPlace(layout=shared("hidden")),
    "button": w.ButtonStyle,
    **{f"button-{kind}": _button_style(color) for kind, color in BUTTON.items()},
    "toggle": ToggleButtonStyle,
    "html": HTMLStyle,
    "checkbox": CheckboxStyle,
    "radio": DescriptionStyle,
}
_SHARED: dict[str, w.Widget] = {}


def card_color(kind: str, color: str) -> None:
    """The cards of decisions of ``kind`` have ``color``: their shared layout
    (``card-<kind>``) and their static copies' border."""
    CARD_COLORS[kind] = color
    _FACTORIES[f"card-{kind}"] = _card_layout(color)


def shared(name: str) -> w.Widget:
    """The shared model called ``name`` (a Layout or a Style); never mutate it."""
    obj = _SHARED.get(name)
    if obj is None or obj.comm is None:  # first use, or closed (Widget.close_all)
        obj = _SHARED[name] = _FACTORIES[name]()
    return obj


def warm() -> None:
    """Open the shared models the cards use, ahead of the first card (a card then shows after
    only its own models; see docs/benchmarks.md, figure 2)."""
    for name in ("full", "option", "half", "html", "button", "auto", "checkbox",
                 *(f"button-{kind}" for kind in BUTTON),
                 "radio", "keep-place", *(f"card-{kind}" for kind in CARD_COLORS)):
        shared(name)


def look(layout: str = "layout", style: str | None = None) -> dict[str, w.Widget]:
    """``layout=`` and ``style=`` keyword arguments of shared models, for a widget's constructor."""
    out = {"layout": shared(layout)}
    if style is not None:
        out["style"] = shared(style)
    return out


def typed_area(**kw: Any) -> TypedBox:
    """A full-width box the user types into that a button then reads (feedback, an edit, a
    comment, a reason): its text reaches the kernel as it is typed, ahead of any click
    (:mod:`.typed`: ipywidgets' ``Textarea`` held its text behind an unanswered update while
    a click went out at once, and a retyped plan was approved unedited)."""
    box = TypedBox(**look("full"), **kw)
    in_page_order([box])
    return box


def typed_line(width: str = "half", **kw: Any) -> TypedBox:
    """A one-line :func:`typed_area`."""
    box = TypedBox(multiline=False, **look(width), **kw)
    in_page_order([box])
    return box


def _is_shared(obj: w.Widget) -> bool:
    return any(obj is s for s in _SHARED.values())


def close_tree(roots: Iterable[w.Widget], keep: Iterable[w.Widget] = ()) -> int:
    """Close ``roots`` and every widget model under them (children, layouts, styles), except
    the shared models and the ``keep`` widgets and what is under those. Returns how many
    models were closed (each is one ``comm_close``; their views leave the page)."""
    kept = {id(k) for k in keep}
    seen: set[int] = set()
    stack = list(roots)
    closed = 0
    while stack:
        obj = stack.pop()
        if not isinstance(obj, w.Widget) or id(obj) in seen or id(obj) in kept:
            continue
        seen.add(id(obj))
        if _is_shared(obj):
            continue
        for name in ("children", "layout", "style"):
            sub = getattr(obj, name, None) if obj.has_trait(name) else None
            if isinstance(sub, w.Widget):
                stack.append(sub)
            elif isinstance(sub, tuple | list):
                stack.extend(sub)
        if obj.comm is not None:
            obj.close()
            closed += 1
    return closed
