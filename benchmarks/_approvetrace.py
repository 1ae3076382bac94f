"""Figure 1's Approve path taken apart: where the time from the click to the turn's end goes.

``python -m benchmarks._approvetrace [REPS]`` starts a benchmark kernel, stamps the steps of
the Approve path there (:func:`install`, in that kernel only, never by the product), and runs,
interleaved, the widget plan flow (the click sent as a frontend sends it), the same with no
context meter read at the card (an experiment: ``NO_METER``) and the bare script's flow inside
the same kernel. It prints the medians of each phase, the kernel's CPU
time in them, the iopub messages the kernel sent between the click and the turn's footer,
and one flow's whole timeline. The card's phases (issue 46: the request read, the permission
callback, the decision, the card's widgets, its ``comm_open`` made, sent by the iopub thread,
on the driver's raw socket) are among them; ``--card`` runs the widget flow with and without
the card's controls opened ahead (``NO_SPARES``), interleaved.
"""

from __future__ import annotations

import functools
import json
import sys
import threading
import time
from collections import Counter, defaultdict
from typing import Any

from . import _flowtrace as ft

MAIN = threading.main_thread().ident
NO_METER = [False]
"""An experiment: no context meter read when a card opens (``Meter.soon``)."""
NO_SPARES = [False]
"""An experiment: no plan card controls opened ahead (``plan_spares.ready``: as before issue
46, the card makes them all after the request)."""


def _stamp_reads() -> None:
    """Each message read from the CLI: ``cli-> TYPE`` (a control request: its subtype)."""
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    read = SubprocessCLITransport.read_messages

    @functools.wraps(read)
    async def stamped(self: Any) -> Any:
        async for m in read(self):
            kind = str(m.get("type"))
            if kind == "control_request":
                kind = "req " + str((m.get("request") or {}).get("subtype"))
            elif kind in ("system", "stream_event"):
                kind += " " + str(m.get("subtype") or (m.get("event") or {}).get("type"))
            ft.mark(f"read {kind}")
            yield m

    SubprocessCLITransport.read_messages = stamped  # type: ignore[method-assign]


def install() -> None:
    """Stamp the Approve path's steps (in the kernel; once)."""
    from ipykernel.comm import Comm
    from IPython.core.display_functions import DisplayHandle

    from plan_widgets.agent import decisions, gate_host, meter, runner, sdk, session
    from plan_widgets.widgets import control, shared, turn
    from plan_widgets.widgets.kinds import frame, plan, plan_edit

    ft.install()
    _stamp_reads()
    heard = shared._heard_from_page

    def heard_stamped() -> None:
        ft.mark("click heard" + ("" if threading.get_ident() == MAIN else " (subshell)"))
        heard()

    shared._heard_from_page = heard_stamped
    for owner, name, label in (
        (decisions.PlanDecision, "approve", "approve"),
        (runner.Runner, "_on_result", "on_result"), (runner.Runner, "end", "end"),
        (turn.WidgetTurnView, "finished", "finished"), (turn.WidgetTurnView, "_settle", "settle"),
        (turn.WidgetTurnView, "tool_started", "tool_started"),
        (turn.WidgetTurnView, "tool_finished", "tool_finished"),
        (turn.WidgetTurnView, "marker", "marker"),
        (control.ControlBar, "refresh", "bar.refresh"),
        (DisplayHandle, "update", "display.update"),
        (sdk.SdkClient, "_permission", "permission"),
        (gate_host.SessionGateHost, "open_decision", "host.open_decision"),
        (turn.WidgetTurnView, "decision", "view.decision"),
        (plan.PlanCard, "__init__", "PlanCard"), (frame.Card, "__init__", "Card.frame"),
        (plan_edit.PlanEditor, "__init__", "PlanEditor"),
        (plan, "html_output", "html_output"), (plan, "plan_head", "plan_head"),
    ):
        ft._wrap(owner, name, label)
    emit = session.Session.emit

    def emit_stamped(self: Any, event: Any) -> Any:
        ft.mark(f"emit {event.type}:in")
        try:
            return emit(self, event)
        finally:
            ft.mark(f"emit {event.type}:out")

    session.Session.emit = emit_stamped  # type: ignore[method-assign]
    publish = Comm.publish_msg

    def published(self: Any, msg_type: str, data: Any = None, *a: Any, **k: Any) -> Any:
        name = ((data or {}).get("state") or {}).get("_model_name", "")
        ft.mark(f"iopub {msg_type} {name}".rstrip())
        return publish(self, msg_type, data, *a, **k)

    Comm.publish_msg = published  # type: ignore[method-assign]
    measure = meter.Meter.soon

    def measure_unless(self: Any, number: int) -> None:
        ft.mark("meter soon" + (" (skipped)" if NO_METER[0] else ""))
        if not NO_METER[0]:
            measure(self, number)

    meter.Meter.soon = measure_unless  # type: ignore[method-assign]
    _stamp_iopub_thread()
    try:
        from plan_widgets.widgets.kinds import plan_spares
    except ImportError:  # a commit before issue 46
        return
    ready = plan_spares.ready

    def ready_unless(resting_mode: str, owner: Any = None) -> int:
        return 0 if NO_SPARES[0] else ready(resting_mode, owner)

    plan_spares.ready = ready_unless


def _stamp_iopub_thread() -> None:
    """Each message the iopub thread hands to its socket: ``sent MSG_ID`` (the card's own
    ``comm_open`` is found by its id; the time from the kernel making a message to this stamp
    is the iopub thread's queue and its wait for the GIL)."""
    from ipykernel.iostream import IOPubThread

    send = IOPubThread._really_send

    def really_send(self: Any, msg: Any, *a: Any, **k: Any) -> Any:
        try:
            i = msg.index(b"<IDS|MSG>")
            label = "sent " + json.loads(msg[i + 2])["msg_id"]
        except (ValueError, TypeError, KeyError, IndexError):
            label = "sent ?"
        out = send(self, msg, *a, **k)
        ft.mark(label)
        return out

    IOPubThread._really_send = really_send  # type: ignore[method-assign]


# -- the driver (outside the kernel) -------------------------------------------------------------

def _first(evs: list[list[Any]], label: str, after: float = 0.0) -> float | None:
    return next((t for t, lab, _cpu in evs if lab == label and t >= after), None)


def _phases(evs: list[list[Any]], t_click: float | None, t_end: float | None,
            end_made: float | None) -> dict[str, float]:
    """The Approve path's phases (ms), from the stamps in the kernel and the driver's times."""
    start = t_click if t_click is not None else _first(evs, "->cli control_response allow")
    assert start is not None
    answer = next(t for t, lab, _ in evs if lab == "->cli control_response allow" and t >= start)
    result = _first(evs, "read result", answer)
    points: list[tuple[str, float | None]] = [
        ("click sent -> heard in the kernel", _first(evs, "click heard", start)
         or _first(evs, "click heard (subshell)", start)),
        ("-> approve called", _first(evs, "approve:in", start)),
        ("-> answer written to the CLI", answer),
        ("-> the CLI's first step read (its mode status)", _first(evs, "read system status",
                                                                   answer)),
        ("-> CLI's ResultMessage read (the CLI's work)", result),
        ("-> runner's _on_result", _first(evs, "on_result:in", answer)),
        ("-> turn:ended logged", _first(evs, "emit turn:ended:out", answer)),
        ("-> footer made (header date)", end_made),
        ("-> footer on iopub (driver)", t_end),
    ]
    out: dict[str, float] = {}
    prev = start
    for title, t in points:
        if t is None:
            continue
        out[title] = (t - prev) * 1000
        prev = t
    if t_end is not None:
        out["= click sent -> footer on iopub"] = (t_end - start) * 1000
    else:
        out["= answer -> ResultMessage read"] = ((result or answer) - start) * 1000
    first_cpu = next((c for t, lab, c in evs if t >= start), None)
    last_cpu = evs[-1][2] if evs else None
    if first_cpu is not None and last_cpu is not None:
        out["kernel CPU, click -> last stamp"] = (last_cpu - first_cpu) * 1000
    return out


def _widget(b: Any, k: Any, name: str, meter: bool = True,
            spares: bool = True) -> tuple[dict[str, float], dict[str, Any]]:
    from ._figures import PLAN, footers, new_button
    from ._kernel import wait_card

    cwd = b.fresh_dir("w")
    k.execute(f"_A.ft.take()\n_A.NO_METER[0] = {not meter}\n_A.NO_SPARES[0] = {not spares}")
    since = k.mark()
    k.start(f"%%claude --session {name} --cwd {cwd} --scripted {PLAN} --plan --mode default\n"
            "Add a greeting script")
    card = wait_card(k, "plan", since, timeout=120)
    btn = k.wait_until(lambda: new_button(k, "Approve, auto-accept edits", since), 30)
    click_at = k.mark()
    t_click = time.monotonic()
    k.click(btn)
    end = k.wait_until(lambda: footers(k, since), 120, "turn end")[0]
    evs = json.loads(k.execute("print(_A.ft.take())")["text"])
    off = time.time() - time.monotonic()
    made = end["header"]["date"].timestamp() - off
    with k._lock:
        sent = [m for m in k.messages[click_at:] if m["header"]["date"].timestamp() - off
                <= made and m["header"]["msg_type"] not in ("status", "execute_input")]
    kinds = Counter(_kind(m) for m in sent)
    k.execute(f"await plan_widgets.get({name!r}).close()", timeout=60)
    out = _phases(evs, t_click, end["_t"], made)
    asked = _first(evs, "cli-> can_use_tool ExitPlanMode")
    if asked is not None:
        raw = k.raw_arrival.get(card["header"]["msg_id"], card["_t"])
        out.update(card_phases(evs, asked, card, raw, off))
    return out, {"evs": evs, "t0": t_click, "sent": kinds, "asked": asked}


CARD_POINTS = (
    ("card: request read -> the SDK's permission callback", "permission:in"),
    ("  -> open_decision (the gate's screen, the decision)", "host.open_decision:in"),
    ("  -> the view's decision (the asked event logged, the bar)", "view.decision:in"),
    ("  -> PlanCard begun", "PlanCard:in"),
    ("  -> its first widget comm_open published", "iopub comm_open"),
    ("  -> the card's own comm_open published", "iopub comm_open BoxModel"),
    ("  -> the card's comm_open sent by the iopub thread", "sent"),
)
"""The card's path: each step's stamp (``sent``: the card's message id follows)."""


def card_phases(evs: list[list[Any]], asked: float, card: dict[str, Any], raw: float,
                off: float) -> dict[str, float]:
    """The card's path (ms): the stamps between the request read and the card on iopub, the
    kernel's CPU over it, and the widget messages published before the card's own."""
    out: dict[str, float] = {}
    before = [t for t, lab, _ in evs if lab == "read assistant" and t <= asked]
    if before:
        out["card: ExitPlanMode's assistant message read -> its request read"] = (
            asked - before[-1]) * 1000
    prev = asked
    own = None
    for title, label in CARD_POINTS:
        if label == "sent":
            label = "sent " + card["header"]["msg_id"]
        t = next((u for u, lab, _ in evs if u >= prev and (
            lab.startswith(label) if label == "iopub comm_open" else lab == label)), None)
        if t is None:
            continue
        if label == "iopub comm_open BoxModel":
            own = t
        out[title] = (t - prev) * 1000
        prev = t
    out["  -> on the driver's raw socket"] = (raw - prev) * 1000
    out["card: request read -> card made (header date)"] = (
        card["header"]["date"].timestamp() - off - asked) * 1000
    out["card: request read -> card on iopub (raw socket)"] = (raw - asked) * 1000
    cpu = [(t, c) for t, _lab, c in evs if t >= asked]
    if own is not None and cpu:
        at_card = next(c for t, c in cpu if t >= own)
        out["card: kernel CPU (all threads), request read -> card published"] = (
            at_card - cpu[0][1]) * 1000
        out["card: widget messages published before the card's own"] = float(sum(
            1 for t, lab, _ in evs if asked <= t < own and lab.startswith("iopub comm_")))
    return out


def _kind(m: dict[str, Any]) -> str:
    t = m["header"]["msg_type"]
    c = m["content"]
    if t == "comm_open":
        return "open " + str(((c.get("data") or {}).get("state") or {}).get("_model_name"))
    if t == "comm_msg":
        d = c.get("data") or {}
        return f"msg {d.get('method')} " + ",".join(sorted(d.get("state") or {}))
    return t


def _bare(b: Any, k: Any) -> dict[str, float]:
    from ._figures import PLAN

    k.execute("_A.ft.take()")
    text = k.execute("import benchmarks._bare as _B\n"
                     f"_o = await _B.plan_flow({PLAN!r}, {str(b.fresh_dir('k'))!r})\n"
                     "print(_A.ft.take())", timeout=120)["text"]
    evs = json.loads(text)
    return _phases(evs, None, None, None)


def _timeline(run: dict[str, Any]) -> None:
    asked = run["asked"]
    print("the card: stamps (ms after the ExitPlanMode request was read)")
    for t, label, _cpu in run["evs"]:
        if asked is not None and asked <= t and t < asked + 0.05:
            print(f"  {(t - asked) * 1000:7.1f}  {label}")
    print("one widget flow's stamps (ms after the click sent):")
    for t, label, _cpu in run["evs"]:
        if t >= run["t0"] and not label.startswith("iopub"):
            print(f"  {(t - run['t0']) * 1000:7.1f}  {label}")
    print("the kernel's iopub messages between the click and the footer:")
    for kind, n in run["sent"].most_common():
        print(f"  {n:3d}  {kind}")


def main() -> None:
    from ._figures import Bench, kernel_setup

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    reps = int(args[0]) if args else 10
    card_only = "--card" in sys.argv  # the widget flow only: the card's phases (issue 46)
    b = Bench(reps, False, print)
    k = b.kernel()
    got: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    last: dict[str, Any] = {}
    try:
        kernel_setup(k)
        k.execute("import benchmarks._approvetrace as _A\n_A.install()")
        _widget(b, k, "warm")
        _bare(b, k)
        names = {"w": "widgets", "n": "widgets, no meter read at the card (experiment)",
                 "k": "bare flow in the kernel",
                 "s": "widgets, no card controls opened ahead (experiment: before issue 46)"}
        for i in range(reps):
            order = ("w", "s") if card_only else ("w", "n", "k")
            for who in (order if i % 2 == 0 else order[::-1]):
                if who == "k":
                    out = _bare(b, k)
                else:
                    out, run = _widget(b, k, f"{who}{i}", meter=who != "n", spares=who != "s")
                    last = run if who == "w" else last
                for key, v in out.items():
                    got[names[who]][key].append(v)
            print(f"rep {i + 1}/{reps}", file=sys.stderr, flush=True)
    finally:
        k.shutdown()
    ft.report(reps, got)
    _timeline(last)


if __name__ == "__main__":
    main()
