"""A session's cost is bounded: idle CLIs sleep and wake transparently, a cap on live CLIs per
kernel, and the administrator's policy from the kernel's config files.

Each test runs a real kernel and the real CLI against the scripted model (see conftest).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e


def _events(kernel: Kernel, name: str = "default") -> list[dict[str, object]]:
    path = kernel.eval(f"str(plan_widgets.get({name!r}).log_path)").strip("'")
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _asleep(kernel: Kernel, name: str = "default") -> None:
    kernel.wait_until(lambda: kernel.eval(f"plan_widgets.get({name!r}).status") == "'asleep'",
                      60, f"session {name} to fall asleep")


def test_an_idle_session_sleeps_and_the_next_cell_resumes_it(kernel: Kernel) -> None:
    kernel.execute("%config ClaudeMagics.idle_timeout = 2")
    kernel.execute("%%claude --scripted chat_context.yaml --mode acceptEdits --model m-one\n"
                   "my name is Ada")
    sid = kernel.eval("plan_widgets.get().session_id")
    pid = int(kernel.eval("plan_widgets.get().cli_pid"))
    _asleep(kernel)
    assert kernel.eval("plan_widgets.get().cli_pid") == "None"
    kernel.wait_until(lambda: not _running(pid), 30, "the sleeping CLI to exit")
    kernel.wait_until(lambda: "asleep" in kernel.html_text(), 10, "the bar to say asleep")
    asleep = [e for e in _events(kernel) if e["type"] == "session:asleep"]
    assert len(asleep) == 1 and asleep[0]["reason"] == "idle", asleep
    assert float(asleep[0]["idle_seconds"]) >= 2  # type: ignore[arg-type]
    out = kernel.execute("%%claude\nwhat is my name?")
    # the context came back: the CLI resumed its own transcript
    assert any("Your name is Ada" in md for md in kernel.markdown_outputs()), out
    assert "Resuming the session" in kernel.html_text() + out["text"]
    assert kernel.eval("plan_widgets.get().session_id") == sid
    assert kernel.eval("plan_widgets.get().mode") == "'acceptEdits'"
    assert kernel.eval("plan_widgets.get().model") == "'m-one'"
    woke = [e for e in _events(kernel) if e["type"] == "session:started"]
    assert woke[-1]["resumed_from"] == sid.strip("'")
    assert "Traceback" not in out["text"]


def test_plan_mode_survives_a_sleep(kernel: Kernel) -> None:
    kernel.execute("%config ClaudeMagics.idle_timeout = 2")
    kernel.execute("%%claude --scripted chat_context.yaml --plan\nmy name is Ada")
    assert kernel.eval("plan_widgets.get().mode") == "'plan'"
    _asleep(kernel)
    kernel.execute("%%claude\nwhat is my name?")
    assert kernel.eval("plan_widgets.get().mode") == "'plan'"
    assert any("Your name is Ada" in md for md in kernel.markdown_outputs())


def test_the_cap_puts_the_longest_idle_session_to_sleep(kernel: Kernel) -> None:
    kernel.execute("%config ClaudeMagics.max_live_sessions = 1")
    kernel.execute("%%claude --session A --scripted chat_context.yaml\nmy name is Ada")
    out = kernel.execute("%%claude --session B --scripted chat_context.yaml\nhello")
    assert "Session 'A' was idle longest" in out["text"], out["text"]
    _asleep(kernel, "A")
    assert kernel.eval("plan_widgets.get('B').status") == "'idle'"
    out = kernel.execute("%%claude --session A\nwhat is my name?")
    assert "Session 'B' was idle longest" in out["text"], out["text"]
    _asleep(kernel, "B")
    assert any("Your name is Ada" in md for md in kernel.markdown_outputs())


def test_the_cap_refuses_when_no_session_is_idle(kernel: Kernel) -> None:
    kernel.execute("%config ClaudeMagics.max_live_sessions = 1")
    kernel.execute("%%claude --session A --scripted fault_slow.yaml --background\nbe slow")
    out = kernel.execute("%%claude --session B --scripted chat_context.yaml\nhello",
                         allow_error=True)
    line = [x for x in out["text"].splitlines() if "limit" in x]
    assert line and "'A'" in line[0] and "max_live_sessions = 1" in line[0], out["text"]
    assert "Traceback" not in out["text"]
    assert kernel.eval("plan_widgets.get('B')") == "None"


@pytest.fixture
def configured(workdir: Path) -> Iterator[Kernel]:
    """A kernel whose IPython config file holds a policy and some wrong settings."""
    profile = workdir / ".home" / ".ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_kernel_config.py").write_text(
        "c.ClaudePolicy.forbidden_modes = ['bypassPermissions', 'bypass']\n"
        "c.ClaudePolicy.max_budget_usd = 2.5\n"
        "c.ClaudePolicy.denied_tools = ['WebFetch']\n"
        "c.ClaudeMagics.mode = 'acceptEdit'\n"
        "c.ClaudeMagics.approval_timeout = 'soon'\n"
        "c.ClaudeMagics.idle_timeout = 900\n")
    k = Kernel(workdir)
    try:
        yield k
    finally:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                  timeout=30, allow_error=True)
        k.shutdown()


def test_policy_and_wrong_settings_from_the_config_files(configured: Kernel) -> None:
    k = configured
    out = k.execute("%load_ext plan_widgets\nimport plan_widgets")
    lines = out["text"].strip().splitlines()
    assert "Traceback" not in out["text"]
    assert any("ClaudeMagics.mode = 'acceptEdit' is not valid" in x and "'default'" in x
               for x in lines), lines
    assert any("ClaudeMagics.approval_timeout = 'soon' is not valid" in x for x in lines)
    assert any("unknown mode 'bypass'" in x for x in lines), lines
    assert k.eval("get_ipython().magics_manager.registry['ClaudeMagics'].mode") == "'default'"
    assert k.eval("get_ipython().magics_manager.registry['ClaudeMagics'].idle_timeout") == "900.0"
    out = k.execute("%claude policy")
    assert "forbidden modes: bypassPermissions" in out["text"]
    assert "spending cap per session: $2.5" in out["text"]
    assert "tools always denied: WebFetch" in out["text"]
    assert "idle CLIs close after: 900 s" in out["text"]
    out = k.execute("%%claude --scripted chat_context.yaml --mode bypassPermissions\nhello",
                    allow_error=True)
    assert "forbidden by the administrator's policy" in out["text"], out["text"]
    assert "Traceback" not in out["text"] and len(out["text"].strip().splitlines()) == 1
    k.execute("%%claude --scripted chat_context.yaml --mode acceptEdits\nhello")
    o = "plan_widgets.get().options"
    assert k.eval(f"({o}.max_budget_usd, {o}.denied_tools)") == "(2.5, ('WebFetch',))"
    # a live session cannot be switched into a forbidden mode either
    out = k.execute("%%claude --mode bypassPermissions\nhello", allow_error=True)
    assert "forbidden by the administrator's policy" in out["text"], out["text"]
    assert k.eval("plan_widgets.get().mode") == "'acceptEdits'"


def _running(pid: int) -> bool:
    from kernel import process_running

    return process_running(pid)


def test_the_spending_cap_holds_across_a_sleep(kernel: Kernel) -> None:
    # a turn of chat_context.yaml costs $0.0107 (the CLI's price for the scripted usage)
    out = kernel.execute(
        "s = plan_widgets.session('b', scripted='chat_context.yaml', max_budget_usd=0.015, "
        "idle_timeout=1)\nt = s.ask('my name is Ada')\nawait t.wait(60)\nprint(t.error)")
    assert out["text"].strip().endswith("None"), out["text"]
    _asleep(kernel, "b")
    # the new CLI process may spend only what is left ($0.0043), not the whole cap again
    out = kernel.execute("t = s.ask('what is my name?')\nawait t.wait(60)\nprint(t.error)")
    assert "Reached maximum budget" in out["text"], out["text"]


def test_denied_tools_are_never_run(kernel: Kernel, workdir: Path) -> None:
    (workdir / "write.yaml").write_text(
        "steps:\n  - when: {tool_result: '^$'}\n    reply:\n      - tool: Write\n"
        "        input: {file_path: '{cwd}/denied.txt', content: 'x'}\n"
        "  - repeat: true\n    reply:\n      - text: 'RESULT: {tool_result}'\n")
    kernel.execute("s = plan_widgets.session('w', scripted='write.yaml', mode='acceptEdits', "
                   "denied_tools=('Write',))\nawait s.ask('write it').wait(60)")
    assert not (workdir / "denied.txt").exists()
    # the CLI told the model so, and did not offer the tool
    last = requests_of(workdir)[-1]
    assert "Write is disabled" in last["tool_result"] and "Write" not in last["tools"], last
