"""Issue 22, point 3, end to end: approve into every mode the card offers, in the CLI's order
and words with the last choice first (auto, Accept edits, Manual and Don't Ask here; Bypass
Permissions is offered only in a session that rests in it, and approved into there by
tests/test_e2e_plan.py); the mode marker names modes as the CLI's UI does, the SDK name in its
tooltip; a mode the CLI does not switch to is said in one line on the bar and in the turn, and
the marker shows the mode really in force. Issue 43, point 5: a mode for this plan only lasts
for the plan's work (its turn and the turn the CLI starts for its background agent), then the
session is back in its resting mode, the bar and the turn saying so. The real CLI (2.1.332), a
real kernel, the scripted model."""

from __future__ import annotations

import os
import re
from html import unescape
from pathlib import Path

import pytest
from kernel import Kernel

from plan_widgets.agent.mode_names import APPROVAL_TARGETS, only_label

pytestmark = pytest.mark.e2e


def _marker(k: Kernel) -> tuple[str, str]:
    """The newest mode marker: its text and its tooltip."""
    with k._lock:
        values = [str(s.get("value", "")) for s in k.widgets.values()
                  if s.get("_model_name") == "HTMLModel" and ">mode <b>" in str(s.get("value"))]
    html = values[-1] if values else ""
    title = re.search(r'title="([^"]*)"', html)
    return (unescape(re.sub(r"<[^>]+>", "", html).strip()),
            unescape(title.group(1)) if title else "")


def _pick(k: Kernel, label: str) -> str:
    """Pick ``label`` on the newest plan card's target picker; returns the picker's id."""
    picker = k.wait_widget("DropdownModel", _dom_classes=["pw-approve-into"])
    labels = k.widgets[picker]["_options_labels"]
    k.select(picker, labels.index(label))
    return picker


def test_approve_into_auto_then_the_last_choice_comes_first(kernel: Kernel,
                                                            workdir: Path) -> None:
    k = kernel
    k.execute("%%claude --scripted plan_modes.yaml --plan --mode default\nPlan a greeting")
    picker = k.wait_widget("DropdownModel", _dom_classes=["pw-approve-into"])
    # the CLI's order and words; the resting mode (default: "Manual") is picked
    assert k.widgets[picker]["_options_labels"] == [  # not Bypass: the CLI did not start in it
        choice for m, label in APPROVAL_TARGETS if m != "bypassPermissions"
        for choice in [label] + ([only_label(label, "default")] if m != "default" else [])]
    assert k.widgets[picker]["_options_labels"][k.widgets[picker]["index"]] == (
        "Yes, manually approve edits")
    assert _marker(k)[0] == "mode Plan"
    _pick(k, "Yes, and use auto mode")
    k.click(k.wait_widget("ButtonModel", description="Approve"))
    assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
    assert (workdir / "hello.py").exists()  # auto mode: the Write ran without a card
    assert k.eval("plan_widgets.get().mode") == "'auto'"
    text, tip = _marker(k)
    assert text == "mode Auto" and "'auto' in the SDK" in tip
    # the next plan's card offers auto first, picked
    k.execute("%%claude --plan\nPlan it again")
    picker = k.wait_widget("DropdownModel", _dom_classes=["pw-approve-into"], count=2)
    labels = k.widgets[picker]["_options_labels"]
    assert labels[0] == "Yes, and use auto mode" and k.widgets[picker]["index"] == 0
    _pick(k, "Yes, manually approve edits")
    k.click(k.wait_widget("ButtonModel", description="Approve", count=2))
    assert k.wait_until(lambda: _marker(k)[0] == "mode Manual", 30)
    assert "'default' in the SDK" in _marker(k)[1]


def test_approve_into_accept_edits_then_dont_ask(kernel: Kernel, workdir: Path) -> None:
    """The two targets the test above does not take, one plan each in one session."""
    k = kernel
    k.execute("%%claude --scripted plan_modes.yaml --plan --mode default\nPlan a greeting")
    _pick(k, "Yes, auto-accept edits")
    k.click(k.wait_widget("ButtonModel", description="Approve"))
    assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
    assert (workdir / "hello.py").exists()  # Accept edits: the Write ran without a card
    assert k.eval("plan_widgets.get().mode") == "'acceptEdits'"
    assert k.wait_until(lambda: _marker(k)[0] == "mode Accept edits", 30)
    (workdir / "hello.py").unlink()
    k.execute("%%claude --plan\nPlan it again")
    _pick(k, "Yes, and switch to Don't Ask")
    k.click(k.wait_widget("ButtonModel", description="Approve", count=2))
    assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
    assert k.eval("plan_widgets.get().mode") == "'dontAsk'"
    text, tip = _marker(k)
    assert text == "mode Don't Ask" and "'dontAsk' in the SDK" in tip
    # Don't Ask: what is not allowed beforehand is denied without asking (no card)
    assert not (workdir / "hello.py").exists()
    assert not k.find_widgets("ButtonModel", description="Allow")
    assert any("running in don&#x27;t ask mode" in md or "running in don't ask mode" in md
               for md in k.markdown_outputs())


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="needs root: the CLI refuses bypassPermissions only as root")
def test_a_mode_the_cli_does_not_switch_to_is_said_in_one_line(kernel: Kernel,
                                                               workdir: Path) -> None:
    """The card does not offer Bypass Permissions here (the session does not rest in it), but
    code can ask for it: the CLI lands elsewhere, and that is said."""
    k = kernel  # as root, without IS_SANDBOX, the CLI does not go into bypassPermissions
    k.execute("%%claude --scripted plan_modes.yaml --plan --mode default\nPlan a greeting")
    picker = k.wait_widget("DropdownModel", _dom_classes=["pw-approve-into"])
    assert "Yes, and switch to Bypass Permissions" not in k.widgets[picker]["_options_labels"]
    k.execute("plan_widgets.get().pending.approve('bypassPermissions')")
    # the CLI went to default: the marker says so and what it refused, the turn in one line
    assert k.wait_until(lambda: _marker(k)[0].startswith("mode Manual (refused: "), 30)
    assert "did not switch to Bypass Permissions (bypassPermissions)" in _marker(k)[0]
    assert k.wait_until(lambda: "Mode not switched: the CLI did not switch to Bypass "
                        "Permissions" in k.html_text() + " ".join(k.markdown_outputs()), 30)
    assert k.eval("plan_widgets.get().mode") == "'default'"
    # and the session is truly in default: the Write asks
    k.click(k.wait_widget("ButtonModel", description="Allow", timeout=60))
    assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
    assert (workdir / "hello.py").exists()


def test_a_mode_for_this_plan_only_goes_back_to_the_resting_mode(kernel: Kernel,
                                                                 workdir: Path) -> None:
    """Approved into Accept edits for this plan only: the plan's Write and its background
    agent's run unasked; once the CLI's own turn for the agent's report ends, the session is
    back in Manual (the bar, the turn and the log say so) and the next prompt's Write asks."""
    k = kernel
    k.execute("%%claude --scripted plan_once.yaml --plan --mode default\nPlan a greeting")
    _pick(k, "Yes, auto-accept edits, for this plan only (then Manual)")
    approve = k.wait_widget("ButtonModel", description="Approve")
    assert k.wait_until(lambda: k.widgets[approve]["tooltip"] == (
        "Leave plan mode into Accept edits (acceptEdits), for this plan only (then Manual)"), 30)
    k.click(approve)
    # while the plan's work goes on (the background agent's reply takes 2 s), the bar says so
    assert k.wait_until(lambda: _marker(k)[0] == "mode Accept edits · this plan only", 60)
    assert "back to Manual once its work ends" in _marker(k)[1]
    assert k.wait_until(lambda: _marker(k)[0] == "mode Manual", 90)
    assert (workdir / "hello.py").exists() and (workdir / "from_agent.txt").exists()
    assert not k.find_widgets("ButtonModel", description="Allow")  # both ran unasked
    said = "The plan&#x27;s work is done: back to Manual (approved for this plan only)"
    assert k.wait_until(lambda: said in k.html_text() or said.replace("&#x27;", "'") in
                        k.html_text() + " ".join(k.markdown_outputs()), 30)
    # the return came after the plan's turn and the CLI's own turn for the agent had ended
    log = k.eval("[(e.type, getattr(e, 'origin', None) or getattr(e, 'source', None)) "
                 "for e in plan_widgets.get().events if e.type in "
                 "('turn:ended', 'agent:ended', 'plan:mode')]")
    kinds = eval(log)  # noqa: S307 - our own repr of a list of pairs
    back = kinds.index(("plan:mode", "plan_end"))
    assert ("turn:ended", "task-notification") in kinds[:back]
    assert ("agent:ended", None) in kinds[:back] and ("turn:ended", None) in kinds[:back]
    assert k.eval("plan_widgets.get().mode") == "'default'"
    # the next prompt runs in Manual: its Write asks
    k.execute("%%claude\nwrite another")
    k.click(k.wait_widget("ButtonModel", description="Allow", timeout=60))
    assert k.execute("print(await plan_widgets.get().wait(60))")["text"].strip() == "idle"
    assert (workdir / "another.txt").exists()
