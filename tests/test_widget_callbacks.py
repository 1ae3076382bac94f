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
# Every way ipywidgets, traitlets and the comm package take a callback of a widget or a comm:
# a method (``button.on_click(f)``, ``comm.on_close(f)``, ``manager.register_target(name, f)``)
# or a bare function (``@observe("value")``, ``link(...)``, ``dlink(..., transform)``).
REGISTERS = {"on_click", "observe", "on_submit", "on_msg", "on_close", "on_trait_change",
             "register_callback", "register_target", "on_displayed", "interact",
             "interactive", "link", "dlink", "validate"}
BARE = {"observe", "validate", "link", "dlink", "interact", "interactive"}
"""Those also called as bare functions (``from traitlets import observe``); a bare
``on_click(...)`` or ``on_change(...)`` is the handoff's own (``widgets.shared``)."""
NOT_HANDED = {
    # (file, enclosing function): why its callback need not be handed to the loop
    ("widgets/shared.py", "on_click"): "the handoff itself",
    ("widgets/shared.py", "on_change"): "the handoff itself",
    ("widgets/shared.py", "_count_pages"): "wraps ipywidgets' own control-comm target: it "
    "counts a page and calls ipywidgets' handler where ipywidgets would have",
    ("widgets/typed.py", "__init__"): "the page's text is set as ipywidgets sets a frontend's "
    "update, on the thread it came on, so it is in place before the click the page sent after "
    "it (handed to the loop, it would still come before the click's handoff; no observer "
    "runs here: the cards read the text when a button is clicked)",
    ("ipython/magics.py", "ClaudeMagics"): "a %config setting's observer: a cell changes it, "
    "on the loop's thread, never a page",
    ("ipython/presence.py", "_link_probe"): "the probe's answer (a page's link copying the "
    "label's value) calls Presence._heard, which hands itself to the loop (call_soon_threadsafe)",
    ("ipython/presence.py", "_ask_kernel"): "the fallback comm's close calls Presence._heard, "
    "which hands itself to the loop (call_soon_threadsafe); its wait is bounded (FALLBACK_WAIT)",
}


def _registers(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr in REGISTERS
    return isinstance(func, ast.Name) and func.id in BARE


def _bypasses(path: Path) -> list[str]:
    """Calls in ``path`` that register a widget or comm callback without the handoff."""
    return _bypasses_in(path.read_text(encoding="utf-8"), path.relative_to(PKG).as_posix())


def _bypasses_in(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    allowed: set[int] = set()
    for fn in ast.walk(tree):
        if (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and (where, fn.name) in NOT_HANDED):
            allowed.update(id(n) for n in ast.walk(fn))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _registers(node.func) and id(node) not in allowed:
            found.append(f"plan_widgets/{where}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_every_widget_callback_goes_through_the_one_handoff() -> None:
    found = [x for p in sorted(PKG.rglob("*.py")) for x in _bypasses(p)]
    assert not found, (
        "register widget callbacks with widgets.shared.on_click / on_change (they run on the "
        "kernel's loop; a subshell thread must not run them), or name the exception and why "
        "in NOT_HANDED:\n" + "\n".join(found))


@pytest.mark.parametrize("code", [
    "button.on_click(f)", "box.observe(f, 'value')", "comm.on_msg(f)", "comm.on_close(f)",
    "manager.register_target('x', f)", "widgets.link((a, 'value'), (b, 'value'))",
    "dlink((a, 'value'), (b, 'value'), f)", "widget.on_click(f)",
    "class W(DOMWidget):\n    @observe('value')\n    def _changed(self, change): pass",
])
def test_the_check_sees_each_way_of_registering(code: str) -> None:
    """Each way of taking a callback, written anywhere in the package, is found (and the
    same code inside an allowed function of another file is not allowed)."""
    assert len(_bypasses_in(code + "\n", "widgets/somewhere.py")) == 1, code
    inside = "def _count_pages():\n" + "".join(f"    {line}\n" for line in code.splitlines())
    assert len(_bypasses_in(inside, "widgets/somewhere.py")) == 1, code
    assert _bypasses_in(inside, "widgets/shared.py") == [], code


def test_every_exception_still_names_a_place() -> None:
    """An entry of NOT_HANDED whose function is gone would silently allow its next namesake."""
    for (file, name), _why in NOT_HANDED.items():
        tree = ast.parse((PKG / file).read_text(encoding="utf-8"))
        assert any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                   and n.name == name for n in ast.walk(tree)), (file, name)


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
