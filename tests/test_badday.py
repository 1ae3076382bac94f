"""Issue 32, fast: the CLI's side messages translated (or listed as ignored), and the runner's
handling of them with a fake CLI behind the seam (the end-to-end tests run the real CLI:
tests/test_e2e_badday.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from claude_agent_sdk import SystemMessage
from fake_client import FakeClient
from test_session import make, run

from plan_widgets.agent import cli_system
from plan_widgets.agent import signals as sig
from plan_widgets.agent.sdk import translate
from plan_widgets.agent.turn import NullView


class Recorder(NullView):
    """A view that keeps what it was told (text, markers, live lines, drops)."""

    def __init__(self) -> None:
        self.said: list[tuple[str, Any]] = []

    def text(self, delta: str) -> None:
        self.said.append(("text", delta))

    def marker(self, text: str) -> None:
        self.said.append(("marker", text))

    def live_line(self, text: str) -> None:
        self.said.append(("live", text))

    def live_line_done(self, quiet: str | None) -> None:
        self.said.append(("done", quiet))

    def message_dropped(self) -> None:
        self.said.append(("dropped", None))


# -- translation: every subtype known or said ------------------------------------------------
def test_an_unknown_subtype_and_an_unknown_type_are_said_not_dropped() -> None:
    [s] = translate(SystemMessage(subtype="brand_new", data={"content": "a new thing"}))
    assert s == sig.Unknown("system/brand_new", "a new thing")
    # a type the SDK skips (its parser returns None): read from the raw stream
    assert cli_system.unknown_type({"type": "mystery", "x": 1}) == [
        sig.Unknown("mystery", "fields: x")]
    # measured on CLI 2.1.337: sent for every prompt, and deliberately left out
    assert cli_system.unknown_type({"type": "command_lifecycle", "state": "queued"}) == []
    # an ignored subtype: nothing, by the table
    assert translate(SystemMessage(subtype="turn_duration", data={})) == []


def test_the_table_in_docs_lists_every_subtype_the_code_knows() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    for name in (*cli_system.TRANSLATED, *cli_system.IGNORED, *cli_system.IGNORED_TYPES):
        assert f"`{name}`" in doc, name


def test_shapes_as_measured() -> None:
    retry = translate(SystemMessage(subtype="api_retry", data={
        "attempt": 2, "max_retries": 10, "retry_delay_ms": 4100, "error_status": 529,
        "error": "overloaded"}))
    assert retry == [sig.ApiRetry(2, 10, 4100, 529, "overloaded")]
    [fb] = translate(SystemMessage(subtype="model_fallback", data={
        "trigger": "overloaded", "original_model": "claude-opus-5-5",
        "fallback_model": "claude-sonnet-4-5", "content": "Switched to Sonnet 4.5"}))
    assert fb == sig.Fallback("model_fallback", "claude-sonnet-4-5", "claude-opus-5-5",
                              "Switched to Sonnet 4.5")
    [cb] = translate(SystemMessage(subtype="compact_boundary", data={
        "uuid": "u1", "compact_metadata": {"trigger": "manual", "pre_tokens": 152000,
                                           "post_tokens": 18000}}))
    assert cb == sig.Compacted("manual", 152000, 18000, "u1")
    out = translate(SystemMessage(subtype="init", data={
        "model": "m", "mcp_servers": [{"name": "teamdb", "status": "failed"}]}))
    assert sig.McpServers((("teamdb", "failed", None),)) in out


# -- the runner -------------------------------------------------------------------------------
def _session(tmp_path: Path, script: Any) -> Any:
    return make(tmp_path, script)


def test_retry_then_cut_then_reply_is_shown_once(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        c.emit(sig.MessageStart("m1"))
        c.emit(sig.TextDelta("The first half"))
        c.emit(sig.ApiRetry(1, 10, 500, None, "unknown"))  # the stream broke: a retry
        c.say("The whole reply.")
        c.end_turn()

    async def main() -> None:
        s = _session(tmp_path, script)
        view = Recorder()
        turn = s.ask("hi", view=view)
        await turn
        assert turn.text == "The whole reply."
        kinds = [k for k, _ in view.said]
        assert kinds[:5] == ["text", "dropped", "live", "done", "text"], view.said
        done = [v for k, v in view.said if k == "done"]
        assert done and done[0].startswith("retried 1 time: no response")
        [e] = [e for e in s.events if e.type == "api:retry"]
        assert e.reason == "no response" and e.turn == turn.number
        await s.close()

    run(main())


def test_a_message_started_twice_keeps_only_the_second(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        c.emit(sig.MessageStart("m1"))  # no message_delta: cut, and no api_retry either
        c.emit(sig.TextDelta("Let me"))
        c.say("Let me write it.")
        c.end_turn()

    async def main() -> None:
        s = _session(tmp_path, script)
        turn = s.ask("hi")
        await turn
        assert turn.text == "Let me write it."
        await s.close()

    run(main())


def test_compaction_fallback_mcp_and_unknown_are_events_and_lines(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        c.emit(sig.Compacting(True))
        c.emit(sig.Compacting(False, "success"))
        c.emit(sig.Compacted("manual", 152000, 18000, "u1"))
        c.emit(sig.Compacted("manual", 152000, 18000, "u1"))  # twice: once
        c.emit(sig.Fallback("model_fallback", "claude-sonnet-4-5", "claude-opus-5-5",
                            "Switched to Sonnet 4.5"))
        c.emit(sig.McpServers((("teamdb", "failed", "spawn ENOENT"), ("docs", "connected",
                                                                        None))))
        c.emit(sig.Unknown("system/brand_new", "a new thing"))
        c.say("ok")
        c.end_turn()

    async def main() -> None:
        s = _session(tmp_path, script)
        view = Recorder()
        await s.ask("hi", view=view)
        said = [v for _k, v in view.said]
        assert ("live", "compacting the conversation…") in view.said
        assert ("done", "conversation compacted: 152k → 18k tokens, manual") in view.said
        assert any("model fallback: claude-sonnet-4-5 answers instead of claude-opus-5-5"
                   in str(x) for x in said)
        assert any("does not know (system/brand_new): a new thing" in str(x) for x in said)
        types = [e.type for e in s.events]
        assert types.count("context:compacted") == 1
        assert "model:fallback" in types and "cli:unknown" in types
        assert s.state.mcp["teamdb"]["status"] == "failed"
        assert s.state.last_compaction["post_tokens"] == 18000
        assert s.runner.health.mcp_trouble() == [("teamdb", "failed", "spawn ENOENT")]
        assert s.state.model == "claude-sonnet-4-5"
        await s.close()

    run(main())


def test_a_rate_limit_and_a_notice_are_lines(tmp_path: Path) -> None:
    import time

    assert translate(SystemMessage(subtype="informational", data={
        "content": "Raised this conversation's auto-compact window from 400k to 1m tokens",
        "level": "notice"})) == [sig.Notice(
            "Raised this conversation's auto-compact window from 400k to 1m tokens")]

    async def script(c: FakeClient, prompt: str) -> None:
        c.emit(sig.RateLimit("allowed", None, "five_hour"))  # within the limit: nothing
        c.emit(sig.RateLimit("rejected", time.time() + 600, "five_hour"))
        c.emit(sig.Notice("Raised the auto-compact window"))
        c.say("ok")
        c.end_turn()

    async def main() -> None:
        s = _session(tmp_path, script)
        view = Recorder()
        await s.ask("hi", view=view)
        markers = [v for k, v in view.said if k == "marker"]
        assert markers[0].startswith("rate limit (five hour) reached; resets in 1"), markers
        assert markers[1] == "Raised the auto-compact window"
        [e] = [e for e in s.events if e.type == "api:retry"]
        assert e.attempt == 0 and "resets in" in e.reason
        await s.close()

    run(main())


def test_the_finished_message_is_the_truth(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        c.emit(sig.MessageStart("m1"))
        c.emit(sig.TextDelta("The answer is 4"))
        c.emit(sig.TextDelta("The answer is 42."))  # a stream that went wrong, unseen
        c.emit(sig.AssistantText("The answer is 42.", "m1"))
        c.emit(sig.MessageEnd())
        c.say("And that is all.")
        c.end_turn()

    async def main() -> None:
        s = _session(tmp_path, script)
        view = Recorder()
        turn = await s.ask("hi", view=view)
        assert turn.text == "The answer is 42.\n\nAnd that is all."
        kinds = [k for k, _ in view.said]
        assert kinds[:4] == ["text", "text", "dropped", "text"], view.said
        await s.close()

    run(main())


def test_compaction_reports_out_of_order(tmp_path: Path) -> None:
    async def script(c: FakeClient, prompt: str) -> None:
        c.emit(sig.Compacted("auto", 995000, 2600, "u9"))  # the boundary first
        c.emit(sig.Compacting(True))  # then its status, late
        c.emit(sig.Compacting(False, "success"))
        c.say("ok")
        c.end_turn()

    async def main() -> None:
        s = _session(tmp_path, script)
        view = Recorder()
        await s.ask("hi", view=view)
        assert ("marker", "conversation compacted: 995k → 2,600 tokens, auto") in view.said
        assert not [x for x in view.said if x[0] == "live"], view.said  # no stale "compacting…"
        assert s.runner.health.compacting is None
        await s.close()

    run(main())
