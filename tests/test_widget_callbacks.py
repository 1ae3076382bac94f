"""Issue 31, point 1, without a kernel: every widget callback of the package runs on the loop it
was registered on, also when the click comes on another thread (JupyterLab 4.6 sends widget
messages over a kernel subshell by default; ipykernel 7.4 runs their handlers on the
subshell's thread: docs/cli.md#kernel). One handoff does it (``widgets.shared.handed``, through
``on_click`` and ``on_change``); the first test fails on a callback registered another way.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from test_widgets_light import SUGGESTION, Comms, comms  # noqa: F401  (a fixture)

from plan_widgets.agent.decisions import ToolDecision

PKG = Path(__file__).resolve().parents[1] / "plan_widgets"
# Every way ipywidgets and traitlets take a callback of a widget or its comm.
REGISTERS = {"on_click", "observe", "on_submit", "on_msg", "on_trait_change",
             "register_callback", "on_displayed", "interact", "interactive"}
HANDOFF = PKG / "widgets" / "shared.py"


def _bypasses(path: Path) -> list[str]:
    """Calls in ``path`` that register a widget callback without the handoff."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed: set[int] = set()
    if path == HANDOFF:  # the handoff's own two registrations
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name in ("on_click", "on_change"):
                allowed.update(id(n) for n in ast.walk(fn))
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in REGISTERS and id(node) not in allowed):
            found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: "
                         f"{ast.unparse(node)[:80]}")
    return found


def test_every_widget_callback_goes_through_the_one_handoff() -> None:
    found = [x for p in sorted(PKG.rglob("*.py")) for x in _bypasses(p)]
    assert not found, (
        "register widget callbacks with widgets.shared.on_click / on_change (they run on the "
        "kernel's loop; a subshell thread must not run them):\n" + "\n".join(found))


def _click_from_another_thread(button: Any) -> list[BaseException]:
    """``button`` clicked on a thread of its own with its own running loop, as ipykernel 7.4
    runs a subshell's comm handler; returns what the click raised there."""
    raised: list[BaseException] = []

    async def handler() -> None:
        try:
            button.click()
        except BaseException as e:  # noqa: BLE001 - reported to the test
            raised.append(e)

    t = threading.Thread(target=lambda: asyncio.run(handler()), name="subshell-test")
    t.start()
    t.join(10)
    return raised


def test_a_click_on_another_thread_runs_on_the_kernels_loop(comms: Comms) -> None:  # noqa: F811
    """A tool card's Allow clicked on a 'subshell' thread: the decision resolves on the loop's
    thread and its waiter wakes (before the fix it was set from the click's thread; in debug
    mode asyncio refuses that, and without debug nothing woke the waiting loop)."""
    from plan_widgets.widgets.kinds import card_for

    async def main() -> tuple[list[int], list[BaseException], str]:
        asyncio.get_running_loop().set_debug(True)  # a wrong-thread call_soon raises
        d = ToolDecision("Write", {"file_path": "/x", "content": "y"}, SUGGESTION)
        threads: list[int] = []
        d.on_resolved(lambda _d: threads.append(threading.get_ident()))
        card = card_for(d)
        raised = await asyncio.to_thread(_click_from_another_thread, card.allow_button)
        outcome = await asyncio.wait_for(d.wait(None), 10)
        return threads, raised, outcome.status

    threads, raised, kind = asyncio.run(main())
    assert raised == [] and kind == "allowed"
    assert threads == [threading.get_ident()]  # asyncio.run runs the loop on this thread


def test_a_change_on_another_thread_runs_on_the_kernels_loop(comms: Comms) -> None:  # noqa: F811
    import ipywidgets as w

    from plan_widgets.widgets.shared import on_change

    async def main() -> list[int]:
        box = w.Text()
        seen: list[int] = []
        on_change(box, lambda _ch: seen.append(threading.get_ident()))
        done = asyncio.get_running_loop().create_future()
        on_change(box, lambda _ch: done.set_result(True))
        t = threading.Thread(target=lambda: setattr(box, "value", "typed"))
        t.start()
        t.join(10)
        await asyncio.wait_for(done, 10)
        return seen

    assert asyncio.run(main()) == [threading.get_ident()]


def test_on_the_loops_own_thread_a_click_runs_at_once(comms: Comms) -> None:  # noqa: F811
    """No subshell (subshells off, or ipykernel 6): the callback runs inside the click, as
    before, so a card's state has changed when the click returns."""
    from plan_widgets.widgets.kinds import card_for

    async def main() -> str | None:
        d = ToolDecision("Write", {"file_path": "/x", "content": "y"}, SUGGESTION)
        card_for(d).allow_button.click()
        return d.outcome.status if d.outcome else None

    assert asyncio.run(main()) == "allowed"


def test_a_failing_callback_handed_over_is_logged(
        comms: Comms, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    """Handed over, a callback that raises is logged (the kernel goes on), as ipywidgets
    itself does for a click that raises on its own thread."""
    import ipywidgets as w

    from plan_widgets.widgets.shared import on_click

    def boom(_b: Any) -> None:
        raise ValueError("broken callback")

    async def main() -> None:
        b = w.Button()
        on_click(b, boom)
        ok = asyncio.get_running_loop().create_future()
        on_click(b, lambda _b: ok.set_result(True))
        assert await asyncio.to_thread(_click_from_another_thread, b) == []
        await asyncio.wait_for(ok, 10)

    asyncio.run(main())
    assert "a widget callback failed" in caplog.text
