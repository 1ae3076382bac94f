"""Issue 43, point 4, end to end: the real CLI against the scripted model in real kernels.
Every plan two sessions propose is kept (a plan sent back, its approved revision, a plan
left waiting), across a kernel restart; ``%claude plans`` lists and filters them, opens one
read-only with its Changes against another (chosen on the card as a frontend does), and
``%%claude --from-plan`` carries a kept plan out in a new conversation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_e2e_plan_life import wait_idle
from test_e2e_resume import start, stop

pytestmark = pytest.mark.e2e


def kept(workdir: Path) -> dict[str, dict[str, object]]:
    """The kept plans' records on disk, by the first line of their proposed text."""
    folder = workdir / ".plan_widgets" / "sessions" / "plans"
    out = {}
    for p in folder.glob("*.json"):
        record = json.loads(p.read_text())
        out[(folder / f"{record['id']}.md").read_text().splitlines()[0]] = record
    return out


def shown(out: dict[str, object]) -> str:
    """What a command's display showed a page without widgets (its HTML and text)."""
    return "\n".join(str(d.get("text/html", "")) + str(d.get("text/plain", ""))
                     for d in out["data"])  # type: ignore[attr-defined]


def first_kernel(workdir: Path) -> dict[str, dict[str, object]]:
    """Kernel 1, session ``default``: plan v1 sent back with feedback, v2 approved and done."""
    k = start(workdir)
    try:
        msg = k.start("%%claude --scripted plan_feedback.yaml --mode acceptEdits --plan\n"
                      "Add a greeting script")
        k.set_value(k.wait_widget("AnyModel", multiline=True, timeout=90),
                    "Please also add a test.")
        k.click(k.wait_widget("ButtonModel", description="Keep planning"))
        k.wait_widget("ToggleButtonModel", description="Changes", timeout=60)
        k.click(k.wait_widget("ButtonModel", description="Approve", count=2))
        wait_idle(k, msg)
        plans = kept(workdir)
        assert plans["# Plan v1"]["status"] == "sent back"
        assert plans["# Plan v1"]["feedback"] == "Please also add a test."
        assert plans["# Plan v2"]["status"] == "approved"
        assert plans["# Plan v2"]["revises"] == plans["# Plan v1"]["id"]
        return plans
    finally:
        stop(k)


def test_plans_are_kept_across_sessions_and_a_restart_and_one_is_carried_out(
        workdir: Path) -> None:
    before = first_kernel(workdir)
    v1, v2 = str(before["# Plan v1"]["id"]), str(before["# Plan v2"]["id"])
    (workdir / "hello.py").unlink()
    k = start(workdir)  # a new kernel: nothing of the first is alive
    try:
        # a second session proposes a plan and leaves it waiting
        out = k.execute("%%claude --session second --scripted kept_plans.yaml --plan\n"
                        "Plan a farewell script")
        assert "paused for your decision (plan)" in out["shown"]
        plans = kept(workdir)
        assert plans["# Plan: farewell"]["status"] == "proposed"
        assert plans["# Plan: farewell"]["session"] == "second"
        # the first kernel's plans are as it left them, never rewritten
        assert {p: plans[p] for p in ("# Plan v1", "# Plan v2")} == before

        # all three are listed across the two sessions, newest first, each with Open
        listing = shown(k.execute("%claude plans"))
        assert "3 kept plan(s)" in listing, listing
        assert listing.index("Plan: farewell") < listing.index("Plan v2") \
            < listing.index("Plan v1")
        assert len(k.find_widgets("ButtonModel", description="Open")) == 3
        # filtered by status, by words
        only = shown(k.execute("%claude plans --status sent-back"))
        assert "1 kept plan(s) (status sent back)" in only and v1 in only and v2 not in only
        only = shown(k.execute("%claude plans --text test_hello"))
        assert v2 in only and v1 not in only and "farewell" not in only

        # one opened read-only: a revision opens on its Changes against the plan it revises;
        # another plan is chosen on the card, as a frontend sends the choice
        buttons = len(k.find_widgets("ButtonModel"))
        k.execute(f"%claude plans {v2[:6]}")
        assert k.wait_until(lambda: any(f"Kept plan {v2}: approved" in m
                                        for m in k.markdown_outputs()), 30)

        def changes_from(plan: str, status: str, stats: str, line: str) -> bool:
            return any(f"Changes from plan {plan} ({status}): {stats}" in m and line in m
                       for m in k.markdown_outputs())

        assert k.wait_until(lambda: changes_from(v1, "sent back", "+2",
                                                 "+ 2. Create `test_hello.py`."), 30)
        choice = k.wait_widget("DropdownModel", description="Changes against")
        labels = k.widgets[choice]["_options_labels"]
        assert labels[1].startswith(v1)  # the plan it revises comes first
        k.select(choice, next(i for i, t in enumerate(labels) if "farewell" in t))
        assert k.wait_until(lambda: changes_from(plans["# Plan: farewell"]["id"], "proposed",
                                                 "+3 −2", "`bye.py`.</del>"), 30)
        assert len(k.find_widgets("ButtonModel")) == buttons  # read-only: not one button

        # a mistake fails the cell in one line
        out = k.execute("%%claude --from-plan nosuch\nhi", allow_error=True)
        assert out["reply"]["status"] == "error"
        assert out["text"].strip().splitlines() == [
            f"UsageError: %%claude: no kept plan 'nosuch' in {workdir}/.plan_widgets/sessions/"
            "plans (%claude plans lists them)"], out["text"]

        # the sent-back v1, carried out in a new conversation, with the cell's own words
        out = k.execute(f"%%claude --session runner --scripted kept_plans.yaml --mode "
                        f"acceptEdits --from-plan {v1}\nAlso: say so.")
        assert f"Carrying out kept plan {v1} (sent back" in out["text"], out["text"]
        out = k.execute("print(await plan_widgets.get('runner').wait(timeout=60))", timeout=70)
        assert out["text"].strip() == "idle"
        assert (workdir / "hello.py").read_text() == "print('hello, from a kept plan')\n"
        runner = k.eval("plan_widgets.get('runner').session_id").strip("'")
        assert kept(workdir)["# Plan v1"]["carried_out_in"] == [runner]
        assert kept(workdir)["# Plan v1"]["status"] == "sent back"  # its own story stays
    finally:
        stop(k)
