"""Issue 15 without a kernel: how many widget models a card and a turn cost, that a finished turn
becomes static and closes them, that streaming parses each update once, and how cards read.

ipywidgets opens one comm per model; here the comms are a recorder (no kernel), so every
``comm_open`` and ``comm_close`` a frontend would receive is counted.
"""

from __future__ import annotations

import asyncio
import html
import itertools
import re
from types import SimpleNamespace
from typing import Any

import ipywidgets.widgets.widget as _widget
import pytest

from plan_widgets.agent.decisions import PlanDecision, QuestionDecision, ToolDecision

QUESTIONS = [
    {"question": "Which color should the banner use?", "header": "Color", "multiSelect": False,
     "options": [{"label": "Red", "description": "warm and loud"},
                 {"label": "Blue", "description": "calm and cool"}]},
    {"question": "Which sizes should be generated?", "header": "Sizes", "multiSelect": True,
     "options": [{"label": "Small", "description": "320 px"},
                 {"label": "Medium", "description": "768 px"},
                 {"label": "Large", "description": "1440 px"}]},
]
SUGGESTION = [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]
# Measured before issue 15 (the same recorder, shared models already open): a plan card 17,
# a question card (the two questions above) 39, a tool card 17. (In a kernel, the first plan
# card of a session came after 20 comm_opens.)
BEFORE = {"plan": 17, "question": 39, "tool": 17}
ADDED = {"plan": 3}
"""Controls a card gained after it was halved, one widget model each (issue 22: Comment on a
line, whose picker is made on the first click; Approve, start fresh; the Approve target)."""
_IDS = itertools.count()


class Comms:
    """A stand-in for the kernel's comms: records every open, message and close."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.closed: list[str] = []
        self.sent = 0

    def create_comm(self, **kw: Any) -> Any:
        rec = self

        class Comm:
            kernel = "recorder"

            def __init__(self) -> None:
                # unique across tests: a widget left from an earlier test closes (and leaves
                # the registry) by its id when it is garbage-collected
                self.comm_id = f"c{next(_IDS)}"
                rec.opened.append(kw.get("data", {}).get("state", {}).get("_model_name", "?"))

            def open(self, *a: Any, **k: Any) -> None:
                pass

            def on_msg(self, *a: Any, **k: Any) -> None:
                pass

            def send(self, *a: Any, **k: Any) -> None:
                rec.sent += 1

            def close(self, *a: Any, **k: Any) -> None:
                rec.closed.append(self.comm_id)

        return Comm()


class Handle:
    """A display handle that keeps what was displayed and every update."""

    def __init__(self, bundle: dict[str, Any]) -> None:
        self.shown = [bundle]

    def update(self, bundle: dict[str, Any], raw: bool = False) -> None:
        self.shown.append(bundle)

    @property
    def last(self) -> dict[str, Any]:
        return self.shown[-1]


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> Comms:
    rec = Comms()
    monkeypatch.setattr(_widget.comm, "create_comm", rec.create_comm)
    monkeypatch.setattr(_widget, "_instances", {})  # only this test's widgets
    from plan_widgets.widgets import shared
    from plan_widgets.widgets.kinds import plan_spares

    monkeypatch.setattr(shared, "_SHARED", {})  # this recorder's shared models
    monkeypatch.setattr(plan_spares, "_SPARE", {})  # ... and spare controls
    monkeypatch.setattr(plan_spares, "_ASKED", [None])
    return rec


@pytest.fixture
def displays(monkeypatch: pytest.MonkeyPatch) -> list[Handle]:
    shown: list[Handle] = []

    def display(bundle: dict[str, Any], raw: bool = False, display_id: bool = False) -> Handle:
        shown.append(Handle(bundle))
        return shown[-1]

    from plan_widgets.widgets import control, shared

    for mod in (control, shared):  # (cards and turns display through shared.shown_here)
        monkeypatch.setattr(mod, "display", display)
    return shown


def live(comms: Comms) -> list[str]:
    """Model names still open, shared layouts and styles left out."""
    from plan_widgets.widgets.shared import _SHARED

    shared = {id(s) for s in _SHARED.values()}
    return sorted(type(w_).__name__ for w_ in _widget._instances.values()
                  if id(w_) not in shared)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _card(kind: str) -> Any:
    from plan_widgets.widgets.kinds import card_for

    if kind == "plan":
        return card_for(PlanDecision("# Plan\n\n1. step", "/tmp/p.md", "default"))
    if kind == "question":
        return card_for(QuestionDecision(QUESTIONS))
    return card_for(ToolDecision("Write", {"file_path": "/x", "content": "y"}, SUGGESTION))


# -- one module per decision kind -------------------------------------------------------------
def test_every_decision_kind_has_its_module_with_a_colour() -> None:
    """A decision class (agent/decisions.py) is shown by the kind module of its name, which
    gives its cards' colour (registered with their shared layout)."""
    from plan_widgets.agent.decisions import KINDS as DECISIONS
    from plan_widgets.widgets.kinds import KINDS
    from plan_widgets.widgets.shared import CARD_COLORS

    for name in DECISIONS:
        assert KINDS[name].color and CARD_COLORS[name] == KINDS[name].color


def test_kernel_code_is_a_kind_shown_as_a_tool_card(comms: Comms) -> None:
    from plan_widgets.widgets.kinds import card_html, kind_of
    from plan_widgets.widgets.kinds.tool import ToolCard

    async def main() -> None:
        code = ToolDecision("mcp__kernel__run_code", {"code": "x = 1"}, [])
        other = ToolDecision("mcp__kernel__run_code", {"cell": "x = 1"}, [])
        assert kind_of(code).name == "code" and kind_of(other).name == "tool"
        card = kind_of(code).card(code)
        assert isinstance(card, ToolCard) and "pw-card-tool" in card._dom_classes
        assert "<pre>" not in card_html(code) and "<pre>" in card_html(other)

    run(main())


# -- lighter cards ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["plan", "question", "tool"])
def test_a_card_costs_at_most_half_the_comm_opens(comms: Comms, kind: str) -> None:
    from plan_widgets.widgets.shared import warm

    async def main() -> tuple[int, int]:
        warm()  # as a session's control bar does, before any card
        base = len(comms.opened)
        _card(kind)
        first = len(comms.opened) - base
        _card(kind)
        return first, len(comms.opened) - base - first

    first, then = run(main())
    print(f"{kind} card: {first} comm_opens (before: {BEFORE[kind]})")
    assert first == then and first * 2 <= BEFORE[kind] + 2 * ADDED.get(kind, 0)


def test_a_plan_cards_controls_opened_ahead_leave_it_only_its_own(comms: Comms) -> None:
    """Issue 46: the card's fixed controls, opened while the model writes the plan, are the
    card's own once it takes them; after the request it opens only the plan, the Approve
    target, the status line and its box. It looks and works as a card that made them."""
    from plan_widgets.widgets.kinds import plan_spares
    from plan_widgets.widgets.kinds.plan_targets import into
    from plan_widgets.widgets.shared import warm

    def look(card: Any) -> list[tuple[Any, ...]]:
        return [(type(c).__name__, getattr(c, "description", None), c.tooltip
                 if c.has_trait("tooltip") else None, getattr(c, "button_style", None),
                 getattr(c, "placeholder", None), c.layout, getattr(c, "style", None),
                 c._dom_classes) for c in card.children]

    async def main() -> None:
        warm()
        made = _card("plan")  # nothing ready: the card makes them (as before issue 46)
        assert plan_spares.ready("default") == 7 and plan_spares.ready("default") == 0
        base = len(comms.opened)
        d = PlanDecision("# Plan\n\n1. step", "/tmp/p.md", "default")
        d.last_target = "acceptEdits"  # Approve leads where the last plan went
        card = card_for(d)
        assert sorted(comms.opened[base:]) == ["BoxModel", "DropdownModel", "HTMLModel",
                                               "OutputModel"]
        assert plan_spares._SPARE == {}  # taken once: the next card makes its own
        assert card.approve_button.tooltip == into(("acceptEdits", False), "default")
        # alike but for what follows the last target (Approve's tooltip, the picker's value)
        def fixed(card: Any) -> list[tuple[Any, ...]]:
            return [x for x in look(card) if x[0] != "Dropdown"
                    and (x[0] != "Button" or x[1] != "Approve")]

        assert fixed(card) == fixed(made)
        _card("plan")
        assert len(comms.opened) - base == 4 + len(made.children)  # (KeepPlace: shared; box)
        # a session resting in acceptEdits has no auto-accept shortcut: none is made for it
        assert plan_spares.ready("acceptEdits") == 6
        card.approve_button.click()  # a spare's click reaches the decision
        assert d.outcome is not None and d.outcome.mode == "acceptEdits"

    from plan_widgets.widgets.kinds import card_for

    run(main())


def test_plan_controls_opened_ahead_are_never_shown_and_close_with_their_turn(
        comms: Comms, displays: list[Handle]) -> None:
    """Issue 46: the controls a plan-mode turn opens ahead of a plan card are in no display
    (nothing a person could click: they have no callback yet); a turn that ends without a plan
    closes them, so a kernel whose turns never bring a plan keeps none from turn to turn; a
    turn that ended does not close the set a later turn asked for."""
    from plan_widgets.widgets import ControlBar, WidgetTurnView
    from plan_widgets.widgets.kinds import plan_spares

    def tree(root: Any) -> set[int]:
        seen, stack = set(), [root]
        while stack:
            x = stack.pop()
            if id(x) not in seen:
                seen.add(id(x))
                stack.extend(getattr(x, "children", ()))
        return seen

    async def main() -> None:
        s = _session()
        s.plan_in_force, s.options = True, SimpleNamespace(mode="default", cwd="/w")
        bar = ControlBar(s)
        before = live(comms)  # the bar's models
        for _turn in range(3):  # turns in plan mode that bring no plan
            view = WidgetTurnView(s, "what would you do?", bar)
            view.show()
            view.message_started()
            spares = list(plan_spares._SPARE.values())
            assert len(spares) == 7 and not {id(x) for x in spares} & tree(view)
            view.text("I would ask first.")
            view.finished("0.1 s", True)
            view.turn_done()
            assert all(x.comm is None for x in spares) and plan_spares._SPARE == {}
            assert live(comms) == before  # nothing of the turn is left open
            view.message_started()  # a late message of an ended turn opens nothing
            assert plan_spares._SPARE == {}
        one, two = (WidgetTurnView(s, p, bar) for p in ("one", "two"))
        one.message_started()
        two.message_started()  # (the same set: the newer turn holds it)
        one.turn_done()
        assert len(plan_spares._SPARE) == 7
        two.turn_done()
        assert plan_spares._SPARE == {}

    run(main())


def test_the_widgets_are_what_a_user_acts_on(comms: Comms) -> None:
    async def main() -> dict[str, list[str]]:
        return {k: sorted(type(c).__name__ for c in _card(k).children)
                for k in ("plan", "question", "tool")}

    kids = run(main())
    # the plan shown once, Edit, Comment on a line, feedback, four buttons and the Approve
    # target, the status line; and in every card the shared invisible KeepPlace (the keyboard
    # goes on where the person was after a click: issue 42, point 4)
    assert kids["plan"] == ["Button", "Button", "Button", "Button", "Button", "Button",
                            "Dropdown", "HTML", "KeepPlace", "Output", "TypedBox"]
    # per question: its text, its options (radio buttons for one choice, one checkbox per
    # option for several), Other, Notes; then Submit and the status line
    assert kids["question"] == sorted(
        ["HTML", "RadioButtons", "TypedBox", "TypedBox"] + ["HTML", "Checkbox", "Checkbox",
                                                          "Checkbox", "TypedBox", "TypedBox"]
        + ["Button", "HTML", "KeepPlace"])
    # Allow, Deny, a checkbox per update the CLI suggests (taken one by one: point 6)
    assert kids["tool"] == ["Button", "Button", "Checkbox", "HTML", "KeepPlace", "Output",
                            "TypedBox"]


def test_question_options_once_with_descriptions(comms: Comms) -> None:
    import ipywidgets as w

    async def main() -> Any:
        return _card("question")

    card = run(main())
    radios = [c for c in card.children if isinstance(c, w.RadioButtons)]
    boxes = [c for c in card.children if isinstance(c, w.Checkbox)]
    # one choice: radio buttons, nothing picked yet; their labels are plain text (text nodes
    # in the page), which the card's own CSS lets wrap
    assert len(radios) == 1 and radios[0].index is None
    assert radios[0]._options_labels == ("Red — warm and loud", "Blue — calm and cool")
    assert "pw-radio" in radios[0]._dom_classes
    shown = " ".join(c.value for c in card.children if isinstance(c, w.HTML))
    assert ".pw-radio .widget-radio-box label{height:auto" in shown
    # several: the description is HTML that wraps (a plain one is cut off with an ellipsis)
    assert all(b.description_allow_html and "white-space:normal" in b.description
               for b in boxes)
    assert [html.unescape(re.sub(r"<[^>]+>", "", b.description)) for b in boxes] == [
        "Small — 320 px", "Medium — 768 px", "Large — 1440 px"]
    # ... and on hover the plain text, not that HTML's source
    assert [b.tooltip for b in boxes] == ["Small — 320 px", "Medium — 768 px", "Large — 1440 px"]
    assert "calm and cool" not in shown and "320 px" not in shown  # not a second list
    assert "(pick one)" not in shown and "(pick any)" in shown
    # a single choice is one of the radios; several stay checked
    radios[0].index = 0
    radios[0].index = 1
    assert radios[0].value == "Blue"
    boxes[0].value = boxes[2].value = True
    assert boxes[0].value and boxes[2].value
    # sent as the CLI expects
    card._submit()
    assert card.decision.outcome.answers == {
        QUESTIONS[0]["question"]: "Blue", QUESTIONS[1]["question"]: "Small, Large"}


def test_a_single_choice_with_other_sends_both(comms: Comms) -> None:
    import ipywidgets as w

    from plan_widgets.widgets.typed import TypedBox

    async def main() -> Any:
        return _card("question")

    card = run(main())
    radio = next(c for c in card.children if isinstance(c, w.RadioButtons))
    other = [c for c in card.children if isinstance(c, TypedBox)][0]
    card._submit()
    assert "Pick an option or write one." in card.status.value
    other.value = "Teal"  # Other alone answers a single choice
    card._submit()
    assert "Not answered yet: Sizes" in card.status.value
    radio.index = 0  # with a radio picked too, both go (as with checkboxes); Sizes was named
    card._submit()
    assert card.decision.outcome.answers == {QUESTIONS[0]["question"]: "Red, Teal"}


def test_a_checkbox_label_with_tex_is_never_math(comms: Comms) -> None:
    from plan_widgets.widgets.kinds.question import checkbox

    async def main() -> Any:
        return checkbox({"label": "Delete $\\phantom{all}$ files", "description": "$5"})

    box = run(main())
    assert box.description_allow_html
    assert "$" not in box.description and "\\" not in box.description
    assert "mathjax_ignore" in box.description and "<span" in box.description
    assert html.unescape(re.sub(r"<[^>]+>", "", box.description)) == \
        "Delete $\\phantom{all}$ files — $5"


def test_a_decided_card_copy_becomes_static_and_closes(comms: Comms,
                                                       displays: list[Handle]) -> None:
    from plan_widgets.widgets.kinds import show_card

    async def main() -> Any:
        d = ToolDecision("Bash", {"command": "ls $HOME"}, [])
        card = show_card(d)
        assert "application/vnd.jupyter.widget-view+json" in displays[-1].last
        d.deny("not now", by="user")
        await asyncio.sleep(0)  # the copy goes static after the click's own handler
        return card

    card = run(main())
    out = displays[-1].last
    assert "application/vnd.jupyter.widget-view+json" not in out
    assert "Denied" in out["text/markdown"] and "not now" in out["text/markdown"]
    assert "ls $HOME" in html.unescape(out["text/markdown"])
    assert card.comm is None and live(comms) == []


# -- cards that read well --------------------------------------------------------------------
def test_card_headings_stay_below_the_card_title() -> None:
    from plan_widgets.render.markdown import CARD_TITLE_STYLE, render_html
    from plan_widgets.widgets.kinds import card_html

    def size(style: str) -> float:
        m = re.search(r"font-size:([\d.]+)em", style)
        assert m, style
        return float(m.group(1))

    out = render_html("# One\n\n## Two\n\n###### Six\n\ntext", card=True)
    sizes = [size(s) for s in re.findall(r'<h\d style="([^"]+)"', out)]
    assert len(sizes) == 3 and max(sizes) < size(CARD_TITLE_STYLE)
    assert render_html("# One") == '<div class="pw-md tex2jax_ignore mathjax_ignore">\n' \
        "<h1>One</h1>\n</div>"  # outside cards: unchanged

    async def plan() -> str:
        return card_html(PlanDecision("# Big plan <script>x()</script>", None, "default"))

    static = run(plan())
    assert static.index("pw-card-title") < static.index("<h1 style=")
    assert "<script>" not in static and "&lt;script&gt;" in static


# -- finished turns become static ------------------------------------------------------------
def _session() -> Any:
    state = SimpleNamespace(mode="acceptEdits", requested_mode=None, refused=None,
                            model="claude-test")
    return SimpleNamespace(name="default", state=state, status="working", plan_in_force=False,
                           subscribe=lambda fn: None)


def test_a_finished_turn_is_static_and_its_widgets_close(comms: Comms,
                                                          displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar, WidgetTurnView, shared

    async def main() -> Any:
        s = _session()
        bar = ControlBar(s)
        base, base_shared = len(comms.opened), len(shared._SHARED)
        view = WidgetTurnView(s, "do it", bar)
        view.show()
        view.text("Hello **world**.\n\nSecond")
        view.text(" paragraph.")
        view.tool_started("t1", "Bash", {"command": "echo $HOME"})
        view.tool_finished("t1", "/root", False)
        d = ToolDecision("Write", {"file_path": "/x", "content": "y"}, [])
        view.decision(d)
        view.text("After the card.")
        view.finished("0.1 s · 5 in / 2 out tokens", True)
        view.turn_done()
        assert not view.static  # its decision is still open: the card stays live
        d.allow(by="user")
        await asyncio.sleep(0)
        return view, len(comms.opened) - base - (len(shared._SHARED) - base_shared)

    view, opened = run(main())
    bar_handle, turn_handle = displays
    assert view.static
    out = turn_handle.last
    assert set(out) == {"text/markdown", "text/plain"}  # no widget view left
    md = out["text/markdown"]
    for part in ("<strong>world</strong>", "Second paragraph.", '<details class="pw-tool"',
                 "echo &#36;HOME", "/root", "pw-card-tool pw-static", "Allowed",
                 "After the card.", "✓ 0.1 s"):
        assert part in md, part
    assert md.index("world") < md.index("pw-tool") < md.index("Allowed") < md.index("After")
    # every model of the turn is closed; the control bar stays live
    assert len(comms.closed) == opened
    assert live(comms) == sorted(["Button", "ControlBar", "HTML", "HTML", "HTML",
                                  "ToggleButton"])
    print(f"a turn with text, a tool and a tool card: {opened} comm_opens, all closed")
    # the bar's display: live, shown once and never updated (control.py's doc); its
    # fallback names the session
    assert "application/vnd.jupyter.widget-view+json" in bar_handle.last
    assert len(bar_handle.shown) == 1 and "session default" in bar_handle.last["text/markdown"]


def test_the_control_bar_is_live_in_its_newest_cell_only(comms: Comms,
                                                          displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar

    async def main() -> None:
        s = _session()
        bar = ControlBar(s)
        first = bar.show()
        bar.ran_under(first)
        s.state.mode = "plan"
        second = bar.show()
        assert "application/vnd.jupyter.widget-view+json" not in first.last
        assert "Accept edits" in first.last["text/plain"]  # what its turn ran under
        assert "application/vnd.jupyter.widget-view+json" in second.last
        # a new session of the same name: the old bar retires and closes
        ControlBar(_session()).show()
        assert bar.closed and bar.comm is None
        assert "mode Plan" in second.last["text/plain"]

    run(main())


# -- streaming -------------------------------------------------------------------------------
def test_each_stream_update_parses_the_new_text_once(comms: Comms,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import ipywidgets as w

    from plan_widgets.render import markdown as render
    from plan_widgets.widgets import markdown as wmd

    parsed: list[int] = []
    real = render.render_stream
    monkeypatch.setattr(wmd, "render_stream", lambda t: (parsed.append(len(t)), real(t))[1])
    monkeypatch.setattr(wmd, "render_html", lambda t: pytest.fail("rendered again"))
    para = "A paragraph with **bold** and `code`.\n\n"
    doc = para * 40 + "- a list\n- that goes on"

    async def main() -> Any:
        s = wmd.StreamingMarkdown(w.VBox())
        for i in range(0, len(doc), 25):
            s._chunks.append(doc[i:i + 25])
            if i % 200 == 0:
                s.flush()
        s.flush()
        return s

    s = run(main())
    # each update parsed only the text not frozen yet: the whole text about once in all
    assert sum(parsed) < 1.3 * len(doc), (sum(parsed), len(doc))
    assert len(parsed) == s.flushes
    assert s.html().count("<p>") == 40 and "<li>that goes on</li>" in s.html()


def _shown_html(box: Any) -> str:
    """What the page shows of a stream's box: every Output's outputs, in tree order."""
    import ipywidgets as w

    if isinstance(box, w.Output):
        return "\n".join(o["data"]["text/markdown"] for o in box.outputs)
    return "\n".join(h for h in (_shown_html(c) for c in box.children) if h)


def test_a_stream_shows_its_text_once_at_every_update_with_one_message(comms: Comms) -> None:
    """Parts (issue 35): at every update the page shows the text so far exactly once, in order
    (frozen blocks, then the tail), and an update that seals no part is one widget message."""
    import ipywidgets as w

    from plan_widgets.render.markdown import render_stream
    from plan_widgets.widgets import markdown as wmd

    para = "A paragraph with **bold** and `code`, long enough to count.\n\n"
    doc = para * 1500 + "- a list\n- that goes on"  # more parts than a page holds

    async def main() -> tuple[int, int, list[Any]]:
        box = w.VBox()
        s = wmd.StreamingMarkdown(box)
        ones = seals = 0
        for i in range(0, len(doc), 90):
            s._chunks.append(doc[i:i + 90])
            parts, sent = s._open, comms.sent
            s.flush()
            if s._open is parts:  # nothing sealed: this update was one message
                assert comms.sent - sent == 1
                ones += 1
            else:
                seals += 1
            # the page: the blocks frozen so far, each once, then the tail
            frozen = "\n".join(s._html)
            _, _, tail = render_stream(s.text[s._frozen:])
            assert _shown_html(box) == "\n".join(h for h in (frozen, tail) if h)
        return ones, seals, list(box.children)

    ones, seals, kids = run(main())
    assert ones > 5 * seals > 0  # parts are sealed now and then, not at every block
    # the box is the first page (PAGE_SIZE parts), then pages of parts
    first, pages = kids[:wmd.PAGE_SIZE], kids[wmd.PAGE_SIZE:]
    assert all(isinstance(c, w.Output) for c in first) and len(first) == wmd.PAGE_SIZE
    assert pages and all(isinstance(p, w.VBox) and 0 < len(p.children) <= wmd.PAGE_SIZE
                         for p in pages)


def test_stream_updates_stay_under_ten_a_second() -> None:
    from plan_widgets.widgets.markdown import FLUSH_INTERVAL

    assert FLUSH_INTERVAL >= 0.1


@pytest.mark.parametrize("parser", ["comrak", "markdown-it-py"])
def test_render_stream_is_the_parts_rendered_alone(parser: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from plan_widgets.render import engine
    from plan_widgets.render.markdown import render_html, render_stream, stable_prefix

    if parser == "markdown-it-py":  # where comrak has no wheel
        monkeypatch.setattr(engine, "_comrak", lambda: None)
    assert engine.parser_name() == parser

    lines = ["para *text*", "", "- item", "1. one", "    code", "```", "~~~", "| a | b |",
             "|---|---|", "# head", "> quote", "***", "[x]: http://a.b", "see [x]", "  more",
             "<div>", "<pre>", "</pre>", "<!-- c -->", "a\r", "[y]", " [z]: /z"]

    @settings(max_examples=600, deadline=None)
    @given(st.lists(st.sampled_from(lines), max_size=12).map("\n".join),
           st.integers(min_value=0, max_value=3))
    def check(doc: str, trim: int) -> None:
        doc = doc[:len(doc) - trim] if trim < len(doc) else doc
        cut = stable_prefix(doc)
        assert render_stream(doc) == (
            cut, render_html(doc[:cut]) if cut else "",
            render_html(doc[cut:]) if cut < len(doc) else "")

    check()


# -- remote images are not loaded, in every place a turn shows (issue 25) --------------------
REMOTE = "A chart: ![chart](https://evil.example/c.png?d=secret) and ![ok](img/local.png)"


def _live_html() -> str:
    """Every rendered output and HTML value of the widgets still open: what the page shows."""
    import ipywidgets as w

    parts = []
    for wid in list(_widget._instances.values()):
        if isinstance(wid, w.Output):
            parts += [o.get("data", {}).get("text/markdown", "") for o in wid.outputs]
        elif isinstance(wid, w.HTML):
            parts.append(wid.value)
    return "\n".join(parts)


def test_a_remote_image_loads_nowhere_a_turn_shows(comms: Comms,
                                                   displays: list[Handle]) -> None:
    from plan_widgets.widgets import ControlBar, WidgetTurnView
    from plan_widgets.widgets.kinds import card_html

    def shown_safely(out: str) -> None:
        assert "evil.example/c.png" in out  # the link is there ...
        assert '<img src="https://' not in out  # ... the image is not loaded
        assert "chart (image from evil.example, not loaded)" in out
        assert '<img src="img/local.png"' in out  # the page's own server: loaded

    async def main() -> Any:
        s = _session()
        view = WidgetTurnView(s, "go", ControlBar(s))
        view.show()
        view.text(REMOTE + "\n\nmore text\n\n")
        assert view._stream is not None
        view._stream.flush()
        live_turn = _live_html()
        plan = PlanDecision(f"# Plan\n\n{REMOTE}", "/tmp/p.md", "default")
        view.decision(plan)
        live_card = _live_html()
        plan.approve(by="user")
        await asyncio.sleep(0)
        view.finished("0.1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        return view, live_turn, live_card, card_html(plan)

    view, live_turn, live_card, static_card = run(main())
    shown_safely(live_turn)  # the live stream
    shown_safely(live_card.replace(live_turn, ""))  # the live plan card
    shown_safely(static_card)  # the card's static copy
    assert view.static
    static = displays[-1].last["text/markdown"]
    assert static.count("not loaded") == 2 and "<img src=\"https://" not in static


def test_remote_images_setting_reaches_the_render_path() -> None:
    from traitlets.config import Config

    from plan_widgets.ipython.magics import ClaudeMagics
    from plan_widgets.render import engine
    from plan_widgets.render.markdown import render_html

    try:
        m = ClaudeMagics(shell=None)  # %config ClaudeMagics.remote_images = [...]
        m.remote_images = ["Example.com"]
        assert '<img src="https://example.com/a.png"' in render_html(
            "![a](https://example.com/a.png)")
        m.remote_images = False
        assert "<img" not in render_html("![a](https://example.com/a.png)")
        c = Config()
        c.ClaudeMagics.remote_images = True  # a config file's setting
        ClaudeMagics(shell=None, config=c)
        assert "<img" in render_html("![a](https://other.org/a.png)")
    finally:
        engine.allow_remote_images(False)


def test_comments_by_clicking_lines_edit_remove_and_close_clean(comms: Comms,
                                                                displays: list[Handle]) -> None:
    """Issue 31, point 5: the plan line by line (rendered), a click on a line opens the note
    below it; a comment is added, edited, removed; Done commenting and Keep planning; every
    widget the line view made closes with the card."""
    import ipywidgets as w

    from plan_widgets.widgets.kinds import show_card

    async def main() -> tuple[Any, PlanDecision, list[str]]:
        d = PlanDecision("# Plan\n\n## Risks\n1. Create `a.py`\n2. Run it", "/tmp/p.md",
                         "default")
        card = show_card(d)
        box = card.comments
        box.open_button.click()
        rows = box.rows
        assert sorted(rows) == [1, 3, 4, 5] and "<code>a.py</code>" in rows[4].description
        rows[4].value = True  # a click on the line
        assert box.picked == 4 and box.form in box.view.children
        box.note.value = "name the file"
        box.add_button.click()
        rows[3].value = True
        box.note.value = "say what could go wrong"
        box.add_button.click()
        assert [(c.line, c.note) for c in d.comments] == [(4, "name the file"),
                                                         (3, "say what could go wrong")]
        notes = [r for r in box.view.children if "pw-comment-row" in r._dom_classes]
        assert len(notes) == 2 and not any(r.value for r in rows.values())
        edit = [b for b in notes[1].children if getattr(b, "description", "") == "Edit comment"]
        edit[0].click()  # notes follow the lines: the second row is line 4's
        assert box.note.value == "name the file" and box.add_button.description == "Save comment"
        box.note.value = "name it hello.py"
        box.add_button.click()
        drop = [b for b in box._notes[d.comments[0]].children
                if getattr(b, "description", "") == "Remove comment"]
        drop[0].click()
        box.open_button.click()  # Done commenting: the rendered plan, comments below it
        shown = [d.comments, box.view, box.open_button.description]
        d.reject("", by="user")
        await asyncio.sleep(0)
        return card, d, shown

    card, d, shown = run(main())
    assert [(c.line, c.note) for c in shown[0]] == [(4, "name it hello.py")]
    assert shown[1] not in card.children and shown[2] == "Comment on a line"
    assert "On the line:\n  > 1. Create `a.py`\n  Comment: name it hello.py" in d.outcome.feedback
    assert isinstance(card, w.Box) and card.comm is None and live(comms) == []


def test_a_turn_a_page_loaded_keeps_its_record_in_its_root(
        comms: Comms, displays: list[Handle], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: a widget manager connected after the turn was shown (a reload, a second tab),
    so a page may show the turn's display from the file, where no display update reaches:
    the turn still gets the update, and its root widget stays, holding the static record
    (its other models close). Without such a page it closes as before (the test above)."""
    from plan_widgets.widgets import ControlBar, WidgetTurnView, shared

    async def main() -> Any:
        s = _session()
        view = WidgetTurnView(s, "do it", ControlBar(s))
        view.show()
        d = ToolDecision("Write", {"file_path": "/x", "content": "y"}, [])
        view.decision(d)
        monkeypatch.setattr(shared, "_PAGES", [shared._PAGES[0] + 1])  # a page connects
        view.text("After the card.")
        view.finished("0.1 s", True)
        view.turn_done()
        d.allow(by="user")
        await asyncio.sleep(0)
        return view

    view = run(main())
    turn_handle = displays[-1]
    assert view.static and set(turn_handle.last) == {"text/markdown", "text/plain"}
    assert view.comm is not None, "the root closed: a page that loaded it shows nothing"
    (record,) = view.children
    (out,) = record.outputs
    assert out["data"] == turn_handle.last  # the same record as the update
    assert "Allowed" in out["data"]["text/markdown"]
    assert sorted(live(comms)) == sorted(["Button", "ControlBar", "HTML", "HTML", "HTML",
                                          "Output", "ToggleButton", "WidgetTurnView"])


def test_a_turn_decided_from_another_page_keeps_its_record_in_its_root(
        comms: Comms, displays: list[Handle], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36 with real-time collaboration: a collaborator's page open before the cell ran
    (its widget manager connected before, so it is not counted) shows the turn from the
    shared document, where no display update reaches once the page that ran the cell is
    gone. Its click on the card tells the kernel that another page shows this display: the
    root stays, holding the static record. A click from the page that ran the cell does
    not (the turn closes as before)."""
    import ipywidgets as w

    from plan_widgets.widgets import ControlBar, WidgetTurnView, shared

    def allow_button(root: w.Widget) -> w.Button:
        todo, found = [root], []
        while todo:
            x = todo.pop()
            todo.extend(getattr(x, "children", ()))
            if isinstance(x, w.Button) and x.description == "Allow":
                found.append(x)
        (b,) = found
        return b

    async def main(clicker: str) -> Any:
        monkeypatch.setattr(shared, "_client", lambda: "page-A")
        s = _session()
        view = WidgetTurnView(s, "do it", ControlBar(s))
        view.show()
        d = ToolDecision("Write", {"file_path": "/x", "content": "y"}, [])
        view.decision(d)
        monkeypatch.setattr(shared, "_client", lambda: clicker)
        allow_button(view).click()
        await asyncio.sleep(0)
        assert d.outcome is not None and d.outcome.granted
        view.finished("0.1 s", True)
        view.turn_done()
        await asyncio.sleep(0)
        return view

    assert run(main("page-A")).comm is None, "a click from the running page kept the root"
    view = run(main("page-B"))
    assert view.static and view.comm is not None, "the collaborator's page would go blank"
    (record,) = view.children
    assert "Allowed" in record.outputs[0]["data"]["text/markdown"]
