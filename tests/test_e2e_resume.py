"""Issue 5 end to end: a kernel dies with a plan pending; a new kernel resumes the session.

The first kernel is killed (SIGKILL: no cleanup runs in it, as in a crash; a restart from the
frontend interrupts the kernel first, and a pending plan then ends 'cancelled by interrupt').
The second kernel starts in the same working directory, so the event log
(``<cwd>/.plan_widgets/sessions``) and the CLI's own transcript (the scratch HOME is
``<cwd>/.home``) are still there.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from kernel import Kernel, requests_of

pytestmark = pytest.mark.e2e

FAKE_KEY = "sk-ant-api03-FAKEFAKEFAKE0123456789abcdefXYZ"
FAKE_TOKEN = "ghp_" + "Z" * 36
CODEWORD = "PELICAN-42"


def start(workdir: Path, env: dict[str, str] | None = None) -> Kernel:
    k = Kernel(workdir, env=env)
    k.execute("%load_ext plan_widgets\nimport plan_widgets")
    return k


def stop(k: Kernel) -> None:
    try:
        k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)", timeout=30,
                  allow_error=True)
    finally:
        k.shutdown()


def marker(k: Kernel, label: str) -> str:
    """The newest control bar's ``label`` marker (mode, model) as the page shows it."""
    with k._lock:
        values = [str(s.get("value", "")) for s in k.widgets.values()
                  if s.get("_model_name") == "HTMLModel" and f">{label} <b>" in str(s.get("value"))]
    return re.sub(r"<[^>]+>", "", values[-1]).strip() if values else ""


def wait_settled(k: Kernel, timeout: float = 60) -> str:
    out = k.execute(f"print(await plan_widgets.get().wait(timeout={timeout}))",
                    timeout=timeout + 10)
    return str(out["text"].strip())


def event_logs(workdir: Path) -> list[Path]:
    return [p for p in (workdir / ".plan_widgets" / "sessions").glob("*.jsonl")
            if "." not in p.stem]


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def html_of(out: dict[str, Any]) -> str:
    return "\n".join(d.get("text/html", "") for d in out["data"])


def run_until_pending_plan(workdir: Path) -> dict[str, Any]:
    """Kernel 1: an approved plan (turn 1), then a plan left pending (turn 2); then it dies."""
    k = start(workdir, env={"ANTHROPIC_API_KEY": FAKE_KEY, "MY_SERVICE_TOKEN": FAKE_TOKEN})
    try:
        out = k.execute(
            "%%claude --scripted resume_plan.yaml --plan\n"
            f"Add a greeting script. The codeword is {CODEWORD}. "
            f"Use ANTHROPIC_API_KEY={FAKE_KEY} and the token {FAKE_TOKEN}."
        )
        assert "paused for your decision (plan)" in out["shown"]
        k.click(k.wait_widget("ButtonModel", description="Approve"))
        assert wait_settled(k) == "idle"
        out = k.execute("%%claude --plan\nNow plan a farewell script")
        assert "paused for your decision (plan)" in out["shown"]
        facts = json.loads(k.eval(
            "__import__('json').dumps({'sid': plan_widgets.get().session_id, "
            "'cost': plan_widgets.get().state.cost_usd, 'model': plan_widgets.get().model, "
            "'mode': plan_widgets.get().mode, 'pending': plan_widgets.get().pending.id, "
            "'approved': [p.id for p in plan_widgets.get().plans]})"
        ).strip("'"))
        assert facts["mode"] == "plan" and facts["model"] and facts["cost"] > 0
        assert len(facts["approved"]) == 1
    finally:
        k.crash()  # the pending plan's callback dies with the kernel
    return facts


def test_resume_after_a_kernel_restart_restores_markers_plans_cost_and_context(
        workdir: Path) -> None:
    facts = run_until_pending_plan(workdir)
    sid = facts["sid"]
    before = requests_of(workdir)  # the resumed scripted model starts a fresh request log
    assert len(event_logs(workdir)) == 1

    k = start(workdir)
    try:
        # the sessions found in the logs: id, started, turns, cost, last mode
        out = k.execute("%claude sessions")
        table = html_of(out)
        assert sid in table and ">2</td>" in table and f"${facts['cost']:.4f}" in table
        assert ">Plan</td>" in table and ">1 unanswered</td>" in table  # the bar's word

        # resume by the start of its id
        out = k.execute(f"%claude resume {sid[:8]}")
        assert f"Resumed session {sid}" in out["text"], out["text"]
        assert "1 decision(s) left pending by the old kernel expired" in out["text"]
        assert k.eval("plan_widgets.get().session_id") == repr(sid)

        # the control bar's markers come back from the fold, before the CLI says anything
        assert k.wait_until(lambda: marker(k, "mode") == "mode Plan", 10)
        assert marker(k, "model") == f"model {facts['model']}"
        # the plan history: the approved plan is retrievable, the pending one expired
        assert k.eval("[p.id for p in plan_widgets.get().plans]") == repr(facts["approved"])
        assert "Plan: add a greeting" in k.eval("plan_widgets.get().plans[0].plan")
        pending = facts["pending"]
        assert k.eval(f"plan_widgets.get().state.decisions[{pending!r}].status") == "'expired'"
        assert k.eval(f"plan_widgets.get().state.decisions[{pending!r}].by") == "'restart'"
        assert k.eval("plan_widgets.get().pending") == "None"
        assert k.eval("plan_widgets.get().state.pending") == "[]"
        # the turn the old kernel died in is over, and says why
        assert k.eval("plan_widgets.get().state.working") == "False"
        assert k.eval("plan_widgets.get().state.errors") == (
            "('turn 2 restarted: the kernel stopped before this turn ended',)")
        # ... and nothing about it looks answerable: no buttons, an expired status; the
        # history is static output (issue 25), not a widget left live in the notebook
        shown = [d for d in out["data"] if "pw-history" in d.get("text/markdown", "")]
        assert len(shown) == 1 and WIDGET_VIEW not in shown[0], out["data"]
        history = shown[0]["text/markdown"]
        assert "Expired: the kernel restarted before an answer" in history
        assert "Approved (then mode default)" in history
        assert not k.find_widgets("ButtonModel", description="Approve")
        assert not k.find_widgets("ButtonModel", description="Keep planning")
        # the plans render through the safe path: the planted attribute is inert text
        md = history
        assert "<h1>Plan: add a farewell</h1>" in md and "<h1>Plan: add a greeting</h1>" in md
        assert "onmouseover" in md and "<b onmouseover" not in md
        # spend survives the restart
        out = k.execute("%claude cost")
        assert f"${facts['cost']:.4f} over 2 turns" in out["text"]
        assert k.eval("plan_widgets.get().state.cost_usd") == repr(facts["cost"])

        # the conversation goes on with its context: the CLI resumed its own transcript
        out = k.execute("%%claude\nWhich codeword did I give you?")
        assert wait_settled(k) == "idle"
        assert any(f"the codeword is {CODEWORD}" in m for m in k.markdown_outputs())
        after = [r for r in requests_of(workdir) if r not in before]
        asked = [r for r in after if "which codeword" in r["user"].lower()]
        assert len(asked) == 1 and asked[0]["step"] == 4  # the step that needs the context
        # the resumed turn ran in the mode the session was in (plan), as the marker said
        assert asked[0]["mode"] == "plan"
        assert k.eval("plan_widgets.get().state.turns") == "3"
        assert float(k.eval("plan_widgets.get().state.cost_usd")) > facts["cost"]

        # the log, as a table: escaped text, the expiry with its cause
        out = k.execute("%claude log")
        table = html_of(out)
        assert "plan:decided" in table and f"plan {pending} expired by restart" in table
        assert "turn 2 restarted" in table
        assert "&lt;b onmouseover" in table and "<b onmouseover" not in table
        assert "session:started" in table and "resumed in" in table
        # one log, one CLI transcript: the same session went on
        assert len(event_logs(workdir)) == 1
        transcripts = list((workdir / ".home" / ".claude" / "projects").rglob("*.jsonl"))
        assert [p.stem for p in transcripts] == [sid]
    finally:
        stop(k)

    # secrets never entered the log (the prompt carried a key and a token; so did the env)
    text = event_logs(workdir)[0].read_text(encoding="utf-8")
    assert FAKE_KEY not in text and FAKE_TOKEN not in text
    assert "ANTHROPIC_API_KEY=[redacted]" in text and CODEWORD in text


def test_resume_in_a_cell_and_from_code(workdir: Path) -> None:
    facts = run_until_pending_plan(workdir)
    sid = facts["sid"]

    # %%claude --resume ID: resume and ask in one cell
    k = start(workdir)
    try:
        out = k.execute(f"%%claude --resume {sid}\nWhich codeword did I give you?")
        assert f"Resumed session {sid}" in out["text"]
        assert wait_settled(k) == "idle"
        assert any(f"the codeword is {CODEWORD}" in m for m in k.markdown_outputs())
        history = "\n".join(d.get("text/markdown", "") for d in out["data"])
        assert "Expired: the kernel restarted before an answer" in history
        assert not k.find_widgets("ButtonModel", description="Approve")
        assert k.eval("plan_widgets.get().state.turns") == "3"
        cost = float(k.eval("plan_widgets.get().state.cost_usd"))
        assert cost > facts["cost"]
    finally:
        k.crash()  # again

    # plan_widgets.session(resume=ID): the Python API, a second restart on the same log
    k = start(workdir)
    try:
        k.execute(f"s = plan_widgets.session(resume={sid[:6]!r})")
        assert k.eval("s.session_id") == repr(sid)
        # folded at once: no waiting for the CLI
        assert k.eval("(s.mode, s.state.turns, len(s.plans))") == "('plan', 3, 1)"
        assert float(k.eval("s.state.cost_usd")) == pytest.approx(cost)
        assert k.eval("s.options.scripted").endswith("resume_plan.yaml'")
        k.execute("t = s.ask('Which codeword did I give you, again?')\nawait t.wait(60)")
        assert k.eval("t.ok") == "True"
        assert CODEWORD in k.eval("t.text")
        assert k.eval("s.state.turns") == "4"
        assert float(k.eval("s.state.cost_usd")) > cost
        # the live session and the log agree: a fold of the file is the session's state
        k.execute("from plan_widgets.store import read_events\nfrom plan_widgets.model "
                  "import fold\nf = fold(read_events(s.log_path))")
        assert k.eval("f.as_dict() == s.state.as_dict()") == "True"
    finally:
        stop(k)


def test_log_location_is_configurable(workdir: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "env-logs"
    k = start(workdir, env={"PLAN_WIDGETS_LOG_DIR": str(env_dir)})
    try:
        k.execute("%%claude --scripted resume_plan.yaml\nhello there")
        assert wait_settled(k) == "idle"
        sid = k.eval("plan_widgets.get().session_id").strip("'")
        assert (env_dir / f"{sid}.jsonl").is_file()
        assert not (workdir / ".plan_widgets" / "sessions" / f"{sid}.jsonl").exists()
        # the log_dir option of the Python API
        k.execute("s3 = plan_widgets.session('api', scripted='resume_plan.yaml', "
                  "log_dir='api-logs')\nawait s3.ask('hello from code').wait(60)")
        assert (workdir / "api-logs" / f"{k.eval('s3.session_id').strip(chr(39))}.jsonl").is_file()
        # %config wins over the environment
        k.execute("%config ClaudeMagics.log_dir = 'my-logs'")
        k.execute("%%claude --session other --scripted resume_plan.yaml\nhello again")
        assert k.execute("print(await plan_widgets.get('other').wait(60))")["text"].strip() \
            == "idle"
        other = k.eval("plan_widgets.get('other').session_id").strip("'")
        assert (workdir / "my-logs" / f"{other}.jsonl").is_file()
        out = k.execute("%claude sessions")
        assert other in html_of(out) and f"event logs in {workdir / 'my-logs'}" in html_of(out)
        # the location is documented where users look
        out = k.execute("%claude --help")
        assert "PLAN_WIDGETS_LOG_DIR" in out["text"] and ".plan_widgets/sessions" in out["text"]
        out = k.execute("%%claude --help")
        assert "PLAN_WIDGETS_LOG_DIR" in out["text"]
        # an unknown id is one clear line, no traceback
        out = k.execute("%claude resume nosuchid", allow_error=True)
        assert out["reply"]["status"] == "error"
        assert "no session 'nosuchid' in the event logs" in out["text"]
        assert "Traceback" not in out["text"]
    finally:
        stop(k)
    shutil.rmtree(env_dir, ignore_errors=True)


def test_resume_in_bypass_permissions_goes_back_to_plan_mode_and_can_leave_it(
        workdir: Path) -> None:
    # The CLI grants bypassPermissions only to a session that starts in it
    # (docs/cli.md#plan-mode): the resumed CLI starts there, then plan mode is requested again.
    # As root it needs a sandbox.
    env = {"IS_SANDBOX": "1"}
    k = start(workdir, env=env)
    try:
        out = k.execute("%%claude --scripted resume_plan.yaml --mode bypassPermissions --plan\n"
                        "Add a greeting script")
        assert "paused for your decision (plan)" in out["shown"]
        sid = k.eval("plan_widgets.get().session_id").strip("'")
    finally:
        k.shutdown()
    k = start(workdir, env=env)
    try:
        k.execute(f"%claude resume {sid}")
        assert k.eval("plan_widgets.get().options.mode") == "'bypassPermissions'"
        k.execute("print(await plan_widgets.get().wait(60))")
        assert k.wait_until(lambda: marker(k, "mode") == "mode Plan", 30)
        modes = k.eval("[(e.mode, e.state, e.source) for e in plan_widgets.get().events "
                       "if e.type == 'plan:mode' and e.source == 'resume']")
        assert modes == ("[('plan', 'requested', 'resume'), "
                         "('bypassPermissions', 'effective', 'resume'), "
                         "('plan', 'effective', 'resume')]")
        k.execute("%claude plan off")
        assert k.wait_until(lambda: marker(k, "mode") == "mode Bypass Permissions", 30)
    finally:
        stop(k)
