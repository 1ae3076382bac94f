"""The scripted model: a YAML script served as the Anthropic Messages API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import http.client
import json
import select
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from plan_widgets.scripted import ScriptedModel, ScriptError, load_script
from plan_widgets.scripted._script import fill
from plan_widgets.scripted._server import Request

TIMEOUT = 10
EXAMPLE = Path(__file__).resolve().parents[1] / "plan_widgets" / "scripted" / "examples" / \
    "plan_approve.yaml"


# -- helpers --------------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "script.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def body(user: str = "hi", *, model: str = "m1", tools: list[str] | None = None,
         max_tokens: int = 1000, messages: list[dict[str, Any]] | None = None,
         system: Any = None) -> dict[str, Any]:
    """A request body shaped like the CLI's."""
    b: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "tools": [{"name": t} for t in (["Write"] if tools is None else tools)],
        "messages": messages if messages is not None else [
            {"role": "user", "content": [{"type": "text", "text": user}]}],
        "stream": True,
    }
    if system is not None:
        b["system"] = system
    return b


def tool_result_body(text: str, **kw: Any) -> dict[str, Any]:
    return body(messages=[
        {"role": "user", "content": [{"type": "text", "text": "do it"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": [{"type": "text", "text": text}]}]},
    ], **kw)


class Reply:
    def __init__(self, status: int, headers: dict[str, str], raw: bytes) -> None:
        self.status = status
        self.headers = headers
        self.raw = raw

    @property
    def json(self) -> Any:
        return json.loads(self.raw)

    @property
    def events(self) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for chunk in self.raw.decode().split("\n\n"):
            if not chunk.strip():
                continue
            fields = dict(line.split(": ", 1) for line in chunk.split("\n"))
            data = json.loads(fields["data"])
            assert data["type"] == fields["event"]
            out.append((fields["event"], data))
        return out

    @property
    def names(self) -> list[str]:
        return [e for e, _ in self.events]

    def texts(self, index: int | None = None) -> list[str]:
        return [d["delta"]["text"] for e, d in self.events
                if e == "content_block_delta" and d["delta"]["type"] == "text_delta"
                and (index is None or d["index"] == index)]

    @property
    def text(self) -> str:
        return "".join(self.texts())

    @property
    def tools(self) -> list[tuple[str, dict[str, Any]]]:
        names = {d["index"]: d["content_block"]["name"] for e, d in self.events
                 if e == "content_block_start" and d["content_block"]["type"] == "tool_use"}
        parts: dict[int, str] = {}
        for e, d in self.events:
            if e == "content_block_delta" and d["delta"]["type"] == "input_json_delta":
                parts[d["index"]] = parts.get(d["index"], "") + d["delta"]["partial_json"]
        return [(names[i], json.loads(parts.get(i, "{}"))) for i in sorted(names)]

    @property
    def stop_reason(self) -> str:
        return [d for e, d in self.events if e == "message_delta"][0]["delta"]["stop_reason"]


def post(m: ScriptedModel, payload: Any, path: str = "/v1/messages?beta=true") -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", m.port, timeout=TIMEOUT)
    try:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        conn.request("POST", path, body=data, headers={
            "content-type": "application/json", "x-api-key": "sk-ant-scripted-offline",
            "anthropic-version": "2023-06-01"})
        r = conn.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


@pytest.fixture
def serve(tmp_path: Path):
    """serve(script_text) -> a started ScriptedModel (stopped at the end)."""
    started: list[ScriptedModel] = []

    def start(text: str) -> ScriptedModel:
        path = write(tmp_path, text, f"script{len(started)}.yaml")
        m = ScriptedModel(path, log_path=tmp_path / f"req{len(started)}.jsonl",
                          cwd=str(tmp_path)).start()
        started.append(m)
        return m

    yield start
    for m in started:
        m.stop()


# -- load_script ----------------------------------------------------------------------------


def _one_line_error(source: Any) -> str:
    with pytest.raises(ScriptError) as e:
        load_script(source)
    msg = str(e.value)
    assert "\n" not in msg and msg.strip() == msg and msg
    return msg


def test_load_missing_file(tmp_path: Path) -> None:
    msg = _one_line_error(tmp_path / "nope.yaml")
    assert "nope.yaml" in msg and "cannot read" in msg


def test_load_bad_yaml(tmp_path: Path) -> None:
    msg = _one_line_error(write(tmp_path, "steps:\n  - reply: [\n   text: : x\n"))
    assert "script.yaml" in msg and "not valid YAML" in msg and "line" in msg


def test_load_bad_json(tmp_path: Path) -> None:
    msg = _one_line_error(write(tmp_path, '{"steps": [', "s.json"))
    assert "s.json" in msg and "not valid YAML/JSON" in msg


def test_load_unknown_key(tmp_path: Path) -> None:
    msg = _one_line_error(write(tmp_path, "steps:\n  - reply: [{txt: hello}]\n"))
    assert "steps.0.reply.0.txt" in msg and "not permitted" in msg
    msg = _one_line_error({"steps": [{"reply": [{"text": "x"}], "wen": {}}]})
    assert "steps.0.wen" in msg
    msg = _one_line_error({"steps": [{"when": {"usr": "x"}, "reply": [{"text": "x"}]}]})
    assert "steps.0.when.usr" in msg


def test_load_block_with_text_and_tool(tmp_path: Path) -> None:
    msg = _one_line_error(write(tmp_path, "steps:\n  - reply: [{text: a, tool: Write}]\n"))
    assert "steps.0.reply.0" in msg and "exactly one of text" in msg


def test_load_step_with_neither_reply_nor_fail(tmp_path: Path) -> None:
    msg = _one_line_error(write(tmp_path, "steps:\n  - when: {user: hi}\n"))
    assert "steps.0" in msg and "exactly one of reply or fail" in msg
    msg = _one_line_error({"steps": [{"reply": [{"text": "a"}], "fail": {"status": 500}}]})
    assert "exactly one of reply or fail" in msg


@pytest.mark.parametrize("source, words", [
    ({"steps": []}, "steps"),
    ({}, "steps"),
    ({"steps": [{"fail": {}}]}, "exactly one of status or cut_after_events"),
    ({"steps": [{"fail": {"status": 200}}]}, "steps.0.fail.status"),
    ({"steps": [{"reply": [{"text_size": 0}]}]}, "text_size"),
    ({"steps": [{"reply": [{"text_size": 5, "deltas": 6}]}]}, "deltas"),
    ({"steps": [{"when": {"user": "("}, "reply": [{"text": "x"}]}]}, "when.user"),
    ({"steps": [{"when": {"mode": "planning"}, "reply": [{"text": "x"}]}]}, "when.mode"),
])
def test_load_other_errors(source: Any, words: str) -> None:
    assert words in _one_line_error(source)


def test_load_scalar_file(tmp_path: Path) -> None:
    msg = _one_line_error(write(tmp_path, "hello\n"))
    assert msg.startswith(str(tmp_path / "script.yaml") + ": ")
    assert ": :" not in msg and "valid dictionary" in msg
    assert "valid dictionary" in _one_line_error(write(tmp_path, ""))


def test_load_list_and_example(tmp_path: Path) -> None:
    s = load_script(write(tmp_path, "- reply: [{text: hi}]\n"))
    assert len(s.steps) == 1 and s.steps[0].reply[0].text == "hi"
    ex = load_script(EXAMPLE)
    assert [st.reply[-1].tool or "text" for st in ex.steps] == [
        "Write", "ExitPlanMode", "Write", "text", "text"]
    assert ex.steps[-1].repeat


def test_scripted_model_refuses_a_bad_script_before_starting(tmp_path: Path) -> None:
    with pytest.raises(ScriptError):
        ScriptedModel(write(tmp_path, "steps: 3\n"))


def test_a_start_cancelled_midway_leaves_no_process(tmp_path: Path) -> None:
    """A session stopped while it starts (``%claude stop`` right after a resume) cancels the
    scripted model's start after its process was spawned: the process goes too (before, it
    stayed for the kernel's life)."""
    import psutil

    script = write(tmp_path, "- reply: [{text: hi}]\n")
    me = psutil.Process()

    def models() -> list[psutil.Process]:
        return [c for c in me.children() if c.status() != psutil.STATUS_ZOMBIE
                and "plan_widgets.scripted" in " ".join(c.cmdline())]

    async def main() -> None:
        start = asyncio.ensure_future(ScriptedModel.astart(script))
        deadline = time.monotonic() + 10
        while not models():  # spawned, not yet listening (it takes ~0.3 s to say its port)
            assert time.monotonic() < deadline and not start.done(), "it never started"
            await asyncio.sleep(0.005)
        start.cancel()
        with pytest.raises(asyncio.CancelledError):
            await start
        deadline = time.monotonic() + 5
        while models() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not models(), "the scripted model outlived its cancelled start"

    asyncio.run(main())


# -- placeholders ---------------------------------------------------------------------------


def test_fill() -> None:
    names = {"plan_file": "/p/plans/a.md", "cwd": "/w", "user": "hi", "tool_result": "ok"}
    assert fill("{plan_file} {cwd} {user} {tool_result}", names) == "/p/plans/a.md /w hi ok"
    assert fill("{{cwd}} {{ }} {other} {", names) == "{cwd} { } {other} {"
    assert fill({"a": ["{cwd}/x", 3, {"b": "{user}"}], "{cwd}": None}, names) == {
        "a": ["/w/x", 3, {"b": "hi"}], "{cwd}": None}
    assert fill("{plan_file}", {}) == ""


def test_plan_file_is_read_from_the_request() -> None:
    r = Request(body(system=[{"type": "text", "text": "You are Claude."}], messages=[
        {"role": "user", "content": [{"type": "text", "text":
            "<system-reminder>Plan mode is active. Write your plan to "
            "/home/u/.claude/plans/brave-otter.md, then call ExitPlanMode.</system-reminder>"},
            {"type": "text", "text": "add a greeting"}]}]))
    assert r.plan_file == "/home/u/.claude/plans/brave-otter.md"
    assert r.user == "add a greeting"  # reminders are not the user's text
    assert r.mode == "plan"


def test_placeholders_over_http(serve, tmp_path: Path) -> None:
    m = serve("""
        steps:
          - reply:
              - text: "plan at {plan_file}, cwd {cwd}, you said {user}, braces {{cwd}}"
              - tool: Write
                input: {file_path: "{plan_file}", content: "in {cwd}: {{x}}"}
    """)
    r = post(m, body(messages=[{"role": "user", "content": [
        {"type": "text", "text": "make it; plan file is /tmp/q/.claude/plans/p-1.md here"}]}]))
    assert r.status == 200
    assert r.text == (f"plan at /tmp/q/.claude/plans/p-1.md, cwd {tmp_path}, you said make it; "
                      "plan file is /tmp/q/.claude/plans/p-1.md here, braces {cwd}")
    assert r.tools == [("Write", {"file_path": "/tmp/q/.claude/plans/p-1.md",
                                  "content": f"in {tmp_path}: {{x}}"})]


# -- the stream -----------------------------------------------------------------------------


def test_text_and_tool_stream(serve) -> None:
    m = serve("""
        steps:
          - reply:
              - text: "I'll write it."
              - tool: Write
                input: {file_path: /tmp/x, content: "y"}
    """)
    r = post(m, body())
    assert r.status == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert int(r.headers["content-length"]) == len(r.raw)
    assert r.names == ["message_start", "content_block_start", "content_block_delta",
                       "content_block_stop", "content_block_start", "content_block_delta",
                       "content_block_stop", "message_delta", "message_stop"]
    ev = r.events
    start = ev[0][1]["message"]
    assert start["role"] == "assistant" and start["model"] == "m1" and start["content"] == []
    assert start["id"].startswith("msg_")
    assert ev[1][1]["content_block"] == {"type": "text", "text": ""}
    assert ev[4][1]["content_block"]["type"] == "tool_use"
    assert ev[4][1]["content_block"]["id"].startswith("toolu_")
    assert [d["index"] for _, d in ev[1:7]] == [0, 0, 0, 1, 1, 1]
    assert r.text == "I'll write it."
    assert r.tools == [("Write", {"file_path": "/tmp/x", "content": "y"})]
    assert r.stop_reason == "tool_use"


def test_text_only_ends_turn(serve) -> None:
    m = serve("steps: [{reply: [{text: 'Just text.'}]}]")
    r = post(m, body())
    assert r.names == ["message_start", "content_block_start", "content_block_delta",
                       "content_block_stop", "message_delta", "message_stop"]
    assert r.text == "Just text." and r.stop_reason == "end_turn"


def test_stop_reason_override(serve) -> None:
    m = serve("steps: [{stop_reason: max_tokens, reply: [{text: 'cut sho'}]}]")
    assert post(m, body()).stop_reason == "max_tokens"


def test_long_text_is_split_into_deltas_that_concatenate(serve) -> None:
    text = "Some words, " * 40 + "é ✓ end"
    m = serve("steps: [{reply: [{text: " + json.dumps(text) + "}]}]")
    r = post(m, body())
    assert len(r.texts()) == len(text) // 40
    assert r.text == text


@pytest.mark.parametrize("size, deltas", [(1000, 7), (10, 6), (10, 4), (5, 5), (1, 1), (3, 1),
                                          (12345, 100)])
def test_text_size_and_deltas(serve, size: int, deltas: int) -> None:
    m = serve(f"steps: [{{reply: [{{text_size: {size}, deltas: {deltas}}}]}}]")
    r = post(m, body())
    pieces = r.texts()
    assert len(pieces) == deltas
    assert all(pieces)
    assert len(r.text.encode()) == size
    assert max(map(len, pieces)) - min(map(len, pieces)) <= 1


def test_text_size_default_deltas(serve) -> None:
    m = serve("steps: [{reply: [{text_size: 4000}]}]")
    r = post(m, body())
    assert len(r.text.encode()) == 4000 and len(r.texts()) == 100
    assert "**Markdown**" in r.text


def test_interval_streams_slowly(serve) -> None:
    m = serve("steps: [{interval: 0.1, reply: [{text: 'abc', deltas: 3}]}]")
    t0 = time.monotonic()
    r = post(m, body())
    assert time.monotonic() - t0 >= 0.7  # 8 events, 0.1 s apart
    assert r.texts() == ["a", "b", "c"]


# -- when -----------------------------------------------------------------------------------


def test_when_user(serve) -> None:
    m = serve("""
        steps:
          - when: {user: "(?i)^deploy"}
            reply: [{text: deploying}]
          - when: {user: "hello"}
            reply: [{text: greeting}]
    """)
    assert post(m, body("say hello there")).text == "greeting"
    assert post(m, body("something else")).text.startswith("(scripted model")
    assert post(m, body("Deploy now")).text == "deploying"


def test_when_user_ignores_system_reminders(serve) -> None:
    m = serve("""
        steps:
          - when: {user: "secret"}
            reply: [{text: matched}]
    """)
    msg = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>the secret</system-reminder>"},
        {"type": "text", "text": "plain"}]}]
    assert post(m, body(messages=msg)).text != "matched"


def test_when_tool_result(serve) -> None:
    m = serve("""
        steps:
          - when: {tool_result: "^$"}
            reply: [{text: no result yet}]
          - when: {tool_result: "(?i)file created"}
            reply: [{text: saw the result}]
    """)
    assert post(m, tool_result_body("File created successfully at /x")).text == "saw the result"
    assert post(m, body("hi")).text == "no result yet"


def test_a_reply_says_what_the_person_picked(serve) -> None:
    """Issue 42, point 1: the named groups of a step's ``when`` fill its reply."""
    m = serve("""
        steps:
          - when: {tool_result: '"Color"="(?P<color>[^"]*)".*"Sizes"="(?P<sizes>[^"]*)"'}
            reply: [{text: "a {color} banner in {sizes} {unknown}"}]
    """)
    picked = 'User has answered: "Color"="Red", "Sizes"="Medium". Go on.'
    assert post(m, tool_result_body(picked)).text == "a Red banner in Medium {unknown}"


def test_tool_result_as_string_content(serve) -> None:
    m = serve("steps: [{when: {tool_result: approved}, reply: [{text: 'yes'}]}]")
    b = tool_result_body("x")
    b["messages"][-1]["content"][0]["content"] = "User has approved your plan."
    assert post(m, b).text == "yes"


def test_when_context(serve) -> None:
    m = serve("""
        steps:
          - when: {context: "magic word"}
            reply: [{text: found it}]
    """)
    assert post(m, body("nothing here")).text != "found it"
    msgs = [{"role": "user", "content": "the magic word, early on"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text": "later"}]}]
    assert post(m, body(messages=msgs)).text == "found it"


def test_when_model(serve) -> None:
    m = serve("""
        steps:
          - when: {model: "haiku"}
            repeat: true
            reply: [{text: small}]
          - when: {model: "^claude-opus"}
            reply: [{text: big}]
    """)
    assert post(m, body(model="claude-opus-4")).text == "big"
    assert post(m, body(model="claude-haiku-4")).text == "small"
    assert post(m, body(model="claude-sonnet")).text.startswith("(scripted model")


PLAN_ON = {"role": "system", "content": [{"type": "text", "text":
                                          "Note. Plan mode is active. Do not edit files."}]}


def test_when_mode(serve) -> None:
    m = serve("""
        steps:
          - when: {mode: plan}
            repeat: true
            reply: [{text: planning}]
          - when: {mode: default}
            repeat: true
            reply: [{text: doing}]
    """)
    user = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    assert post(m, body(messages=[user])).text == "doing"
    assert post(m, body(messages=[PLAN_ON, user])).text == "planning"
    assert post(m, body(messages=[user, PLAN_ON])).text == "planning"
    in_user = {"role": "user", "content": [{"type": "text", "text":
                                            "<system-reminder>Plan mode is active."
                                            "</system-reminder>"}, {"type": "text",
                                                                    "text": "go"}]}
    assert post(m, body(messages=[in_user])).text == "planning"
    # The assistant saying it does not count; the latest word wins.
    said = {"role": "assistant", "content": [{"type": "text", "text": "Plan mode is active"}]}
    assert post(m, body(messages=[user, said])).text == "doing"
    exited = {"role": "user", "content": [{"type": "text", "text": "You have exited plan mode."}]}
    assert post(m, body(messages=[PLAN_ON, user, exited])).text == "doing"
    modes = [r["mode"] for r in m.requests()]
    assert modes == ["default", "plan", "plan", "plan", "default", "default"]


def test_conditions_combine(serve) -> None:
    m = serve("""
        steps:
          - when: {mode: plan, user: "x"}
            reply: [{text: both}]
    """)
    assert post(m, body("x")).text != "both"
    assert post(m, body(messages=[PLAN_ON, {"role": "user", "content": "y"}])).text != "both"
    assert post(m, body(messages=[PLAN_ON, {"role": "user", "content": "x"}])).text == "both"


# -- step order and use ---------------------------------------------------------------------


def test_steps_are_used_once_in_order(serve) -> None:
    m = serve("""
        steps:
          - reply: [{text: one}]
          - reply: [{text: two}]
        fallback: nothing left
    """)
    assert [post(m, body()).text for _ in range(3)] == ["one", "two", "nothing left"]
    assert [r["step"] for r in m.requests()] == [0, 1, None]


def test_first_matching_unused_step_wins(serve) -> None:
    m = serve("""
        steps:
          - when: {user: b}
            reply: [{text: first b}]
          - reply: [{text: anything}]
          - when: {user: b}
            reply: [{text: second b}]
    """)
    assert post(m, body("b")).text == "first b"
    assert post(m, body("b")).text == "anything"
    assert post(m, body("b")).text == "second b"
    assert post(m, body("b")).text.startswith("(scripted model")


def test_repeat(serve) -> None:
    m = serve("""
        steps:
          - when: {user: again}
            repeat: true
            reply: [{text: "again: {user}"}]
          - reply: [{text: once}]
    """)
    assert [post(m, body(u)).text for u in ("again 1", "x", "again 2", "y", "again 3")] == [
        "again: again 1", "once", "again: again 2",
        "(scripted model: no step matches this request)", "again: again 3"]


def test_pings_do_not_consume_steps(serve) -> None:
    m = serve("steps: [{reply: [{tool: Write, input: {a: 1}}]}]")
    no_tools = post(m, body(tools=[]))
    assert no_tools.text == "ok" and no_tools.stop_reason == "end_turn"
    one_token = post(m, body(max_tokens=1))
    assert one_token.text == "ok"
    assert post(m, body()).tools == [("Write", {"a": 1})]
    log = m.requests(pings=True)
    assert [(r["ping"], r["step"]) for r in log] == [(True, None), (True, None), (False, 0)]
    assert len(m.requests()) == 1


# -- failures and delay ---------------------------------------------------------------------


def test_fail_status_twice_then_move_on(serve) -> None:
    m = serve("""
        steps:
          - fail: {status: 529, times: 2, message: "busy busy"}
          - reply: [{text: recovered}]
    """)
    for _ in range(2):
        r = post(m, body())
        assert r.status == 529
        assert r.headers["content-type"] == "application/json"
        assert r.json == {"type": "error",
                          "error": {"type": "overloaded_error", "message": "busy busy"}}
    r = post(m, body())
    assert r.status == 200 and r.text == "recovered"
    assert [x["step"] for x in m.requests()] == [0, 0, 1]


@pytest.mark.parametrize("status, kind", [(429, "rate_limit_error"), (500, "api_error"),
                                          (400, "invalid_request_error"), (503, "api_error")])
def test_fail_status_types(serve, status: int, kind: str) -> None:
    m = serve(f"steps: [{{fail: {{status: {status}}}}}]")
    r = post(m, body())
    assert r.status == status and r.json["error"]["type"] == kind
    assert r.json["error"]["message"] == "scripted failure"


def test_fail_cut_after_events(serve) -> None:
    m = serve("""
        steps:
          - fail: {cut_after_events: 3}
          - reply: [{text: whole}]
    """)
    r = post(m, body())
    assert r.status == 200
    assert "content-length" not in r.headers
    assert r.names == ["message_start", "content_block_start", "content_block_delta"]
    r = post(m, body())
    assert r.names[-1] == "message_stop" and r.text == "whole"


def test_delay(serve) -> None:
    m = serve("""
        steps:
          - delay: 1.0
            reply: [{text: slow}]
          - reply: [{text: fast}]
    """)
    t0 = time.monotonic()
    assert post(m, body()).text == "slow"
    assert time.monotonic() - t0 >= 1.0
    t0 = time.monotonic()
    assert post(m, body()).text == "fast"
    assert time.monotonic() - t0 < 0.9


def test_delay_does_not_block_other_requests(serve) -> None:
    m = serve("""
        steps:
          - when: {user: slow}
            delay: 2.5
            reply: [{text: slow}]
          - reply: [{text: fast}]
    """)
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(post(m, body("slow")).text))
    t.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    assert post(m, body("quick")).text == "fast"
    assert time.monotonic() - t0 < 1.5
    assert out == []  # the slow one is still waiting
    t.join(TIMEOUT)
    assert out == ["slow"]


# -- other endpoints, bad requests ----------------------------------------------------------


def test_other_endpoints(serve) -> None:
    m = serve("steps: [{reply: [{text: x}]}]")
    r = post(m, body(), "/v1/messages/count_tokens?beta=true")
    assert r.status == 200 and r.json["input_tokens"] > 0
    r = post(m, body(), "/v1/other")
    assert r.status == 404 and r.json["error"]["type"] == "not_found_error"
    conn = http.client.HTTPConnection("127.0.0.1", m.port, timeout=TIMEOUT)
    try:
        conn.request("GET", "/")
        g = conn.getresponse()
        assert g.status == 200 and json.loads(g.read()) == {"ok": True}
    finally:
        conn.close()
    assert m.requests(pings=True) == []  # none of these is a model request


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"',
                                 b'{"tools": [{"name": "W"}], "messages": [3]}',
                                 b'{"tools": [{"name": "W"}], "messages": [{"role": "user", '
                                 b'"content": 5}]}'])
def test_bad_requests_get_400_and_the_server_lives(serve, raw: bytes) -> None:
    m = serve("steps: [{reply: [{text: fine}]}]")
    r = post(m, raw)
    assert r.status == 400 and r.json["error"]["type"] == "invalid_request_error"
    assert post(m, body()).text == "fine"


# -- the request log ------------------------------------------------------------------------


def test_request_log(serve, tmp_path: Path) -> None:
    m = serve("""
        steps:
          - when: {mode: plan}
            reply: [{text: planning}]
    """)
    post(m, body(model="claude-x", tools=[]))
    post(m, body(model="claude-y", messages=[PLAN_ON, {"role": "user", "content": "go"}]))
    lines = (tmp_path / "req0.jsonl").read_text().splitlines()
    log = [json.loads(x) for x in lines]
    assert len(log) == 2
    assert {k: log[0][k] for k in ("model", "step", "mode", "ping")} == {
        "model": "claude-x", "step": None, "mode": "default", "ping": True}
    assert {k: log[1][k] for k in ("model", "step", "mode", "ping")} == {
        "model": "claude-y", "step": 0, "mode": "plan", "ping": False}
    assert log[1]["user"] == "go" and log[1]["tools"] == ["Write"]
    assert m.requests() == [log[1]]
    assert m.requests(pings=True) == log


# -- the example script ---------------------------------------------------------------------


def test_example_plan_approve_flow(tmp_path: Path) -> None:
    plan = "/tmp/h/.claude/plans/calm-fox.md"
    reminder = {"type": "text", "text": f"<system-reminder>Plan mode is active. Plan file: "
                                        f"{plan}</system-reminder>"}
    with ScriptedModel(EXAMPLE, log_path=tmp_path / "req.jsonl", cwd=str(tmp_path)) as m:
        msgs: list[dict[str, Any]] = [
            {"role": "user", "content": [reminder, {"type": "text", "text": "add a greeting"}]}]
        r = post(m, body(messages=msgs))
        assert r.tools[0][0] == "Write" and r.tools[0][1]["file_path"] == plan
        assert r.tools[0][1]["content"].startswith("# Plan: add a greeting")
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                    "name": "Write", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                               "content": "File created successfully"}]}]
        assert post(m, body(messages=msgs)).tools == [("ExitPlanMode", {})]
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": "t2",
                                                    "name": "ExitPlanMode", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                                               "content": "User has approved your plan."}]}]
        r = post(m, body(messages=msgs))
        assert r.tools == [("Write", {"file_path": f"{tmp_path}/hello.py",
                                      "content": "print('hello from the approved plan')\n"})]
        msgs += [{"role": "assistant", "content": [{"type": "tool_use", "id": "t3",
                                                    "name": "Write", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t3",
                                               "content": "File created successfully"}]}]
        r = post(m, body(messages=msgs))
        assert r.text == "Done: `hello.py` prints a greeting." and r.stop_reason == "end_turn"
        assert post(m, body("thanks")).text == "Hello! You said: thanks"
        assert post(m, body("again")).text == "Hello! You said: again"
        assert [x["step"] for x in m.requests()] == [0, 1, 2, 3, 4, 4]


# -- lifetime -------------------------------------------------------------------------------


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def test_env_and_url(tmp_path: Path) -> None:
    m = ScriptedModel(EXAMPLE, cwd=str(tmp_path))
    m.port = 4321
    env = m.env()
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4321" == m.url
    assert env["ANTHROPIC_API_KEY"] and env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert m.requests() == []


def test_exits_when_stdin_closes(tmp_path: Path) -> None:
    m = ScriptedModel(EXAMPLE, cwd=str(tmp_path)).start()
    proc = m._proc
    assert proc is not None and proc.poll() is None
    assert _listening(m.port)
    t0 = time.monotonic()
    m.stop()
    assert proc.returncode == 0  # exited by itself on EOF, not killed
    assert time.monotonic() - t0 < 5
    assert not _listening(m.port)
    m.stop()  # twice is harmless


def test_cli_exits_on_stdin_eof(tmp_path: Path) -> None:
    p = subprocess.Popen([sys.executable, "-m", "plan_widgets.scripted", str(EXAMPLE)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=tmp_path)
    try:
        ready, _, _ = select.select([p.stdout], [], [], TIMEOUT)
        assert ready, "no PORT line in time"
        line = p.stdout.readline().decode()  # type: ignore[union-attr]
        assert line.startswith("PORT ")
        port = int(line.split()[1])
        assert _listening(port)
        p.stdin.close()  # type: ignore[union-attr]
        assert p.wait(TIMEOUT) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(TIMEOUT)
        p.stdout.close()  # type: ignore[union-attr]
        p.stderr.close()  # type: ignore[union-attr]


def test_cli_bad_script_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = write(tmp_path, "steps:\n  - reply: [{text: a, tool: Write}]\n", "bad.yaml")
    r = subprocess.run([sys.executable, "-m", "plan_widgets.scripted", str(bad)],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bad.yaml" in lines[0]
    r = subprocess.run([sys.executable, "-m", "plan_widgets.scripted", str(tmp_path / "no.yaml")],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_async_start_and_stop(tmp_path: Path) -> None:
    async def main() -> tuple[int, str, int | None]:
        m = await ScriptedModel.astart(EXAMPLE, tmp_path / "a.jsonl", str(tmp_path))
        proc = m._proc
        loop = asyncio.get_running_loop()
        r = await loop.run_in_executor(None, post, m, body("async"))
        await m.astop()
        return m.port, r.text, proc.returncode

    port, text, rc = asyncio.run(asyncio.wait_for(main(), 60))
    assert text == "Hello! You said: async"
    assert rc == 0
    assert not _listening(port)


# -- background agents: notifications and thinking --------------------------------------------

NOTE = ("<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT]\n<task-notification>\n"
        "<task-id>a1</task-id>\n<status>completed</status>\n<summary>Agent \"Write\" finished"
        "</summary>\n</task-notification>\n</system-reminder>")


def test_a_notification_is_matched_where_the_cli_puts_it(serve) -> None:
    """The CLI's notification of a finished background agent sits in a system reminder (as
    measured): ``user`` does not see it, ``notification`` does."""
    m = serve("""
        steps:
          - when: {notification: "<status>completed</status>"}
            reply: [{text: "the agent is done"}]
          - reply: [{text: "something else"}]
    """)
    r = Request(body(messages=[{"role": "user", "content": [{"type": "text", "text": NOTE}]}]))
    assert r.user == "" and "<task-id>a1</task-id>" in r.notification
    got = post(m, body(messages=[{"role": "user", "content": [{"type": "text", "text": NOTE}]}]))
    assert got.text == "the agent is done"
    assert post(m, body()).text == "something else"


def test_thinking_streams_as_signed_thinking_deltas(serve) -> None:
    m = serve("""
        steps:
          - reply:
              - thinking: "first I think"
              - text: "then I answer"
    """)
    r = post(m, body())
    starts = [d["content_block"] for n, d in r.events if n == "content_block_start"]
    assert starts[0] == {"type": "thinking", "thinking": "", "signature": ""}
    deltas = [d["delta"] for n, d in r.events if n == "content_block_delta"]
    assert deltas[0] == {"type": "thinking_delta", "thinking": "first I think"}
    assert deltas[1]["type"] == "signature_delta" and deltas[1]["signature"]
    assert r.text == "then I answer"
    with pytest.raises(ScriptError, match="exactly one of"):
        load_script({"steps": [{"reply": [{"thinking": "x", "text": "y"}]}]})


# -- a bad day (issue 32) -------------------------------------------------------------------
SUMMARY_REQUEST = ("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n...\nYour entire "
                   "response must be plain text: an <analysis> block followed by a <summary> "
                   "block.\n\nAdditional Instructions:\nkeep the greeting")


def test_retry_headers_and_the_cli_retries(serve) -> None:
    m = serve("""
        retries: 3
        steps:
          - fail: {status: 429, times: 2, retry_after: 2.5}
          - fail: {status: 500, should_retry: false}
          - reply: [{text: ok}]
    """)
    assert m.env()["CLAUDE_CODE_MAX_RETRIES"] == "3"
    for _ in range(2):
        r = post(m, body())
        assert r.status == 429 and r.headers["retry-after"] == "2.5"
        assert "x-should-retry" not in r.headers  # the CLI decides by the status
    r = post(m, body())
    assert r.status == 500 and r.headers["x-should-retry"] == "false"
    # without retries (the default) every failure says "do not retry"
    quiet = serve("steps: [{fail: {status: 529}}]")
    assert quiet.env()["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert post(quiet, body()).headers["x-should-retry"] == "false"


def test_a_cut_streams_part_of_its_reply(serve) -> None:
    m = serve("""
        steps:
          - fail: {cut_after_events: 4}
            reply: [{text: "first half, second half", deltas: 4}]
    """)
    r = post(m, body())
    assert r.names == ["message_start", "content_block_start", "content_block_delta",
                       "content_block_delta"]


def test_the_summary_request_is_answered_with_a_summary(serve) -> None:
    m = serve("""
        summary: "They said hi."
        steps:
          - repeat: true
            reply: [{text: "an answer"}]
    """)
    assert post(m, body("hello")).text == "an answer"
    # a catch-all step never answers it: the summary does, in the tags the CLI asks for
    r = post(m, body(SUMMARY_REQUEST))
    assert r.text == "<analysis>scripted</analysis>\n<summary>They said hi.</summary>"
    m2 = serve("""
        steps:
          - when: {summary: true, user: "keep the greeting"}
            reply: [{text: "<summary>kept</summary>"}]
    """)
    assert post(m2, body(SUMMARY_REQUEST)).text == "<summary>kept</summary>"


def test_a_step_sends_extra_headers(serve) -> None:
    m = serve("""
        steps:
          - headers: {anthropic-ratelimit-unified-status: allowed_warning}
            reply: [{text: ok}]
    """)
    r = post(m, body())
    assert r.headers["anthropic-ratelimit-unified-status"] == "allowed_warning" and r.text == "ok"


def test_user_text_is_what_the_person_typed_not_the_clis_interrupt_note() -> None:
    """After an interrupt the CLI puts "[Request interrupted by user for tool use]" before the
    next prompt; a script echoing ``{user}`` said "You said: [Request interrupted by user for
    tool use]" on the page (issue 42, point 5)."""
    from plan_widgets.scripted._server import Request

    body = {"tools": [{"name": "Write"}], "max_tokens": 1000, "messages": [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": [
            {"type": "text", "text": "[Request interrupted by user for tool use]"},
            {"type": "text", "text": "say hello"}]}]}
    assert Request(body).user == "say hello"
