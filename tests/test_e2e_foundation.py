"""Issue 2 end to end: the %%claude magic on a long-lived session, against the real CLI.

Every test drives a real kernel over the Jupyter protocol; the CLI bundled with the SDK talks to
the project's scripted model on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e


def test_streamed_multi_turn_conversation_keeps_context(kernel: Kernel, workdir: Path) -> None:
    first = kernel.execute("%%claude --scripted chat_context.yaml\nHello, my name is Ada")
    assert "Traceback" not in first["text"]
    # streamed as rendered Markdown into Output widgets (the safe renderer's HTML)
    md = "\n".join(kernel.markdown_outputs())
    assert "<strong>remember</strong>" in md and "<li>point one</li>" in md
    second = kernel.execute("%%claude\nWhat is my name?")
    assert "Traceback" not in second["text"]
    md = "\n".join(kernel.markdown_outputs())
    assert "Your name is Ada" in md
    assert "I do not know your name" not in md
    # one CLI session, two turns, the second request carried the first exchange
    reqs = requests_of(workdir)
    assert len({r["session"] for r in reqs if "session" in r}) <= 1
    assert kernel.eval("plan_widgets.get().state.turns") == "2"
    # the closing line: duration, tokens, cost
    assert kernel.wait_until(lambda: kernel.html_text().count("tokens") >= 2, 10)
    status = kernel.execute("%claude status")["text"]
    assert "default: idle" in status and "2 turns" in status
    # modes named as the bar names them, the SDK's name beside
    assert "; mode Manual (default); resting Manual (default);" in status, status


def test_static_fallback_for_frontends_without_widgets(kernel: Kernel) -> None:
    out = kernel.execute("%%claude --scripted chat_context.yaml\nHello, my name is Ada")
    view = "application/vnd.jupyter.widget-view+json"
    bundles = [d for d in out["data"]
               if d.get("text/plain", "").startswith("claude (session default)")]
    assert view in bundles[0], "the cell shows the turn widget"
    last = bundles[-1]
    # the final update is static: readable text and safe Markdown of the whole turn, and no
    # widget view (a saved notebook needs no widget state to show it)
    assert view not in last
    assert "remember" in last["text/plain"] and "Ada" in last["text/plain"]
    assert "<strong>remember</strong>" in last["text/markdown"]


def test_two_named_sessions_at_once(kernel: Kernel, workdir: Path) -> None:
    kernel.execute("%%claude --session a --scripted chat_context.yaml\nmy name is Ada")
    kernel.execute("%%claude --session b --scripted chat_context.yaml\nmy name is Bob")
    kernel.execute("%%claude --session a\nwhat is my name?")
    kernel.execute("%%claude --session b\nwhat is my name?")
    md = "\n".join(kernel.markdown_outputs())
    assert "Your name is Ada" in md
    assert "I do not know your name" in md  # b said Bob, the script knows only Ada
    ids = kernel.eval("sorted(s.session_id != '' for s in plan_widgets.sessions().values())")
    assert ids == "[True, True]"
    assert kernel.eval("plan_widgets.get('a').session_id != plan_widgets.get('b').session_id") \
        == "True"
    out = kernel.execute("%claude sessions")["text"] + str(
        kernel.execute("%claude sessions")["data"])
    assert "a" in out and "b" in out


def test_settings_reach_the_cli(workdir: Path) -> None:
    # A kernel whose environment has a CLAUDE_* setting and a --model option.
    k = Kernel(workdir, env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "1234"})
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        k.execute("%config ClaudeMagics.mode = 'acceptEdits'")
        k.execute("%%claude --scripted chat_context.yaml --model claude-test-model-1\nhi there")
        reqs = requests_of(workdir)
        assert reqs and reqs[-1]["model"] == "claude-test-model-1"
        assert k.eval("plan_widgets.get().model") == "'claude-test-model-1'"
        assert k.eval("plan_widgets.get().mode") == "'acceptEdits'"
        # the CLI process really has the kernel's CLAUDE_* setting in its environment
        env = k.eval("plan_widgets.get().cli_env.get('CLAUDE_CODE_MAX_OUTPUT_TOKENS')")
        assert env == "'1234'"
        # the scripted endpoint went to the CLI only, never into the kernel's environment
        assert k.eval("__import__('os').environ.get('ANTHROPIC_BASE_URL')") == "None"
        # a model switch in a later cell is honoured live
        k.execute("%%claude --model claude-test-model-2\nhello again")
        assert requests_of(workdir)[-1]["model"] == "claude-test-model-2"
        assert k.eval("plan_widgets.get().model") == "'claude-test-model-2'"
    finally:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                  allow_error=True)
        k.shutdown()


def test_help_and_bad_input_are_one_line_messages(kernel: Kernel) -> None:
    out = kernel.execute("%%claude --help\nignored")["text"]
    assert "--plan" in out and "--session" in out and "--scripted" in out
    assert "Traceback" not in out
    # each mistake fails its cell in one line (UsageError), so Run All stops there
    for cell, said in (("%%claude --bogus\nhello", "unrecognized arguments: --bogus"),
                       ("%%claude\n   \n", "prompt is empty"),
                       ("%%claude --mode sideways\nhi", "invalid choice"),
                       ("%%claude --scripted missing.yaml\nhi", "no such file"),
                       ("%%claude --cwd /does/not/exist\nhi", "not a directory")):
        out = kernel.execute(cell, allow_error=True)
        assert out["reply"]["status"] == "error" and said in out["text"], (cell, out["text"])
        assert "Traceback" not in out["text"]
    out = kernel.execute("%claude --help")["text"]
    assert "status" in out and "interrupt" in out and "sessions" in out
    out = kernel.execute("%claude frobnicate", allow_error=True)
    assert out["reply"]["status"] == "error"
    assert "unknown command" in out["text"] and "Traceback" not in out["text"]
    assert kernel.eval("1 + 1") == "2"


def test_no_credentials_says_the_two_ways_forward(kernel: Kernel) -> None:
    out = kernel.execute("%%claude\nhello", allow_error=True)
    assert out["reply"]["status"] == "error"  # the cell fails: Run All stops here
    text = out["text"]
    assert "Traceback" not in text
    assert "ANTHROPIC_API_KEY" in text and "--scripted" in text
    assert text.count("\n") <= 3
    assert kernel.eval("1 + 1") == "2"


def test_cli_that_cannot_start_shows_its_reason(kernel: Kernel) -> None:
    # As root, bypassPermissions is refused by the CLI unless IS_SANDBOX=1 is set.
    import os

    if os.geteuid() != 0:
        pytest.skip("the CLI refuses bypassPermissions only as root")
    out = kernel.execute("%%claude --scripted chat_context.yaml --mode bypassPermissions\nhi",
                         timeout=120, allow_error=True)
    assert out["reply"]["status"] == "error"  # the session could not start: the cell fails
    text = out["text"] + kernel.html_text()
    assert "root" in text or "dangerously-skip-permissions" in text, text[-2000:]
    assert "Traceback" not in out["text"]
    assert kernel.eval("plan_widgets.get().dead is not None") == "True"
    assert kernel.eval("1 + 1") == "2"
    # the next %%claude starts a new session; the old one never started, so there is no
    # conversation to offer to resume
    again = kernel.execute("%%claude --mode default\nmy name is Ada")["text"]
    assert "Starting a new one" in again and "%claude resume" not in again
    assert kernel.eval("plan_widgets.get().mode") == "'default'"


def test_background_turn_returns_at_once(kernel: Kernel) -> None:
    out = kernel.execute("%%claude --scripted chat_context.yaml --background\nmy name is Ada")
    assert "Traceback" not in out["text"]
    out = kernel.execute("import plan_widgets\ns = plan_widgets.get()\n"
                         "print(await s.wait(timeout=60))")
    assert out["text"].strip().endswith("idle")
    assert "remember" in "\n".join(kernel.markdown_outputs())


def test_python_api_session_ask_await(kernel: Kernel) -> None:
    out = kernel.execute(
        "import plan_widgets\n"
        "s = plan_widgets.session('api', scripted='chat_context.yaml')\n"
        "t = await s.ask('my name is Ada').wait(60)\n"
        "t2 = await s.ask('what is my name?').wait(60)\n"
        "print(t.ok, t2.ok, repr(t2.text), s.mode, s.model is not None)\n"
        "await s.close()\n"
        "print(s.status)"
    )
    lines = out["text"].strip().splitlines()
    assert lines[0].startswith("True True 'Your name is Ada")
    assert lines[0].endswith("default True")
    assert lines[-1] == "closed"


@pytest.mark.floors
def test_saved_fallback_shows_the_whole_turn_after_a_decision(
        kernel: Kernel, workdir: Path) -> None:
    # The cell returns at the plan card; the display is updated again when the turn ends, so
    # a saved notebook opened without widgets (GitHub, nbconvert) shows the whole turn.
    out = kernel.execute("%%claude --scripted plan_approve.yaml --mode acceptEdits --plan\n"
                         "Add a greeting script")
    assert "Done" not in out["data"][-1]["text/plain"]
    display_id = kernel.wait_until(lambda: next(
        (m["content"]["transient"]["display_id"] for m in kernel.messages
         if m["header"]["msg_type"] == "display_data" and "transient" in m["content"]
         and m["content"]["data"]["text/plain"].startswith("claude (")), None), 10)
    kernel.execute("d = plan_widgets.get().pending\nd.approve()\n"
                   "await plan_widgets.get().wait(60)")

    def final() -> str | None:
        ups = [m["content"]["data"] for m in kernel.messages
               if m["header"]["msg_type"] == "update_display_data"
               and m["content"].get("transient", {}).get("display_id") == display_id]
        return ups[-1]["text/plain"] if ups and "Done" in ups[-1]["text/plain"] else None

    text = kernel.wait_until(final, 30)
    assert "Plan: add a greeting" in text and "✓" in text
    # ... including how the plan was decided
    assert "Plan proposed" in text and "Approved (next mode: Accept edits)" in text, text


def test_unload_ext_removes_the_magics(kernel: Kernel) -> None:
    kernel.execute("%unload_ext plan_widgets")
    out = kernel.execute("%%claude --scripted chat_context.yaml\nhello", allow_error=True)
    assert "Cell magic `%%claude` not found" in out["text"], out["text"]
    assert kernel.eval("plan_widgets.get() is None") == "True"  # nothing was started
    kernel.execute("%load_ext plan_widgets")
    out = kernel.execute("%%claude --scripted chat_context.yaml\nhello")
    assert kernel.eval("plan_widgets.get().status") == "'idle'"
