"""The ``kernel`` fixture lends a kernel again only as a fresh one (tests/kernel_reuse.py).

What an earlier test leaves (a session, a card's widgets, a variable, a ``%config``, a changed
environment and working directory, its cells in the history) is gone for the next, and a
kernel that cannot be tidied (a child process left, a setting this cannot put back) is not
lent again at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import kernel_reuse
import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e

SCRIPTS = Path(__file__).parent / "scripts"


@pytest.fixture
def fresh(tmp_path: Path) -> Kernel:
    """A kernel as the fixture makes one (loaded, its environment remembered), its own."""
    first = tmp_path / "first"
    first.mkdir()
    shutil.copy(SCRIPTS / "dec_plan.yaml", first)
    k = Kernel(first)
    k.execute(kernel_reuse.LOADED)
    k.execute(kernel_reuse.REMEMBER, store_history=False)
    k.forget(first)
    yield k
    k.shutdown()


def test_a_kernel_lent_again_is_as_a_fresh_one(fresh: Kernel, tmp_path: Path) -> None:
    k = fresh
    magics = "get_ipython().magics_manager.registry['ClaudeMagics']"
    default = k.eval(f"{magics}.approval_timeout")
    # an earlier test: a session with a plan card waiting, a variable, a setting, the cwd
    k.execute("%config ClaudeMagics.approval_timeout = 7")
    k.execute("%%claude --scripted dec_plan.yaml --plan\nPlan the work")
    k.wait_widget("ButtonModel", description="Approve, auto-accept edits")
    k.execute("secret_of_the_last_test = 42")
    k.execute("import os\nos.makedirs('elsewhere')\nos.chdir('elsewhere')")
    assert k.eval("plan_widgets.get() is not None") == "True"
    # os.environ and os.chdir are among what the fixture would not lend again after:
    # here the tidy is asked directly, to see what it puts back
    k.sent_code = [c for c in k.sent_code if "os." not in c]
    assert kernel_reuse.tidy(k) is None
    second = tmp_path / "second"
    second.mkdir()
    kernel_reuse.move(k, second)

    assert k.messages == [] and k.widgets == {}
    # the history is a new one: the fixture's first cell, then this test's own
    assert k.eval("In[:]") == repr(["", kernel_reuse.LOADED, "print(repr(In[:]))"])
    assert k.eval("plan_widgets.get()") == "None"
    assert k.eval("'secret_of_the_last_test' in globals()") == "False"
    assert k.eval("len(__import__('ipywidgets.widgets.widget').widgets.widget._instances)") == "0"
    assert default != "7" and k.eval(f"{magics}.approval_timeout") == default
    assert k.eval("__import__('os').getcwd()") == repr(str(second))
    assert k.eval("__import__('os').environ['HOME']") == repr(str(second / ".home"))
    # the history is a new one: the fixture's first cell, then this test's own


def test_a_kernel_with_a_child_left_or_a_setting_not_put_back_is_not_lent(
        fresh: Kernel) -> None:
    k = fresh
    k.execute("import subprocess\nchild = subprocess.Popen(['sleep', '60'])")
    why = kernel_reuse.tidy(k)
    assert why is not None and "child processes left" in why and "sleep" in why
    k.execute("import psutil\nfor p in psutil.Process().children(): p.kill(); p.wait(5)")
    k.execute("%config ClaudePolicy.max_budget_usd = 1.0", allow_error=True)
    assert kernel_reuse.tidy(k) == "the test ran '%config'"
