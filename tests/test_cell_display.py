"""Issue 31, point 2, without a kernel: a widget a cell's display showed is not closed while that
display still shows widgets.

JupyterLab 4.6 and Notebook 7.6 render an in-place update of a widget display in the same
output renderer, which still listens to the widget it showed first; closing that widget hides
the renderer, and with it the whole output (Approve, start fresh into a mode that asks showed
only the control bar). The browser test is tests/test_browser_approve.py; this one pins the
rule on the models: a turn whose display a stack took over (widgets/follow.py) stays open until
the display is static Markdown, then closes.
"""

# ruff: noqa: F811  (the fixtures comms and displays come from test_widgets_light)
from __future__ import annotations

import asyncio
from typing import Any

from test_agents_ui import _view
from test_widgets_light import Comms, Handle, comms, displays  # noqa: F401

WIDGET = "application/vnd.jupyter.widget-view+json"


def test_a_turn_whose_display_a_stack_took_over_closes_after_the_display_is_static(
        comms: Comms, displays: list[Handle]) -> None:
    async def main() -> list[tuple[str, bool, bool]]:
        view = _view()
        view.text("Planning.")
        handle = displays[-1]
        assert handle.last[WIDGET]["model_id"] == view.model_id  # the display shows the turn
        # start fresh: the new conversation's turn follows in this display, and waits
        fresh = view.follow("Start fresh: the approved plan, in a new conversation")
        seen = [("stacked", WIDGET in handle.last, view.comm is not None)]
        view.finished("0.1 s", False)  # the planning turn ends first
        view.turn_done()
        seen.append(("planning static", WIDGET in handle.last, view.comm is not None))
        fresh.finished("0.1 s", True)
        fresh.turn_done()
        await asyncio.sleep(0)
        seen.append(("all static", WIDGET in handle.last, view.comm is not None))
        return seen

    seen = asyncio.run(main())
    # (what, the display shows widgets, the first turn's model is open)
    assert seen == [("stacked", True, True),
                    ("planning static", True, True),  # shown before: kept open
                    ("all static", False, False)]  # closed once the display left widgets


def test_a_stack_formed_below_a_finished_turn_closes_as_before(
        comms: Comms, displays: list[Handle]) -> None:
    """The display showed static Markdown when the stack formed: nothing is held open."""
    async def main() -> Any:
        view = _view()
        view.finished("0.1 s", True)
        view.turn_done()
        closed_at_once = view.comm is None
        later = view.follow("A turn the CLI started by itself")
        later.finished("0.1 s", True)
        later.turn_done()
        await asyncio.sleep(0)
        return closed_at_once, view._stack.box, WIDGET in displays[-1].last

    assert asyncio.run(main()) == (True, None, False)
