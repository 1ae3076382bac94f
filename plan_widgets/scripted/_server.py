"""A stand-in for the Anthropic Messages API on 127.0.0.1, answering from a script.

It speaks just what the Claude Code CLI uses: ``POST /v1/messages`` with an SSE stream
(message_start, content_block_start/delta/stop, message_delta, message_stop). Each request is
logged as one JSON line (model, matched step, mode, texts) so tests can check who served what.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ._script import Block, Script, Step
from ._stream import collapse, events_for

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_PLAN_FILE = re.compile(r"(/[^\s\"'`<>()]*?/plans/[^\s\"'`<>()]+?\.md)")
_INTERRUPTED = re.compile(r"\[Request interrupted by user[^\]\n]*\]")
"""The CLI's note to the model that the user interrupted (a text block of the next user
message): the scripted model's ``{user}`` is what the person typed, not this (issue 42)."""
_NOTIFICATION = re.compile(r"<task-notification>.*?</task-notification>", re.S)
_PLAN_ACTIVE = re.compile(r"[Pp]lan mode is active|[Pp]lan mode (?:is )?(?:still )?in effect")
_SUMMARY_REQUEST = re.compile(r"Respond with TEXT ONLY.*<summary>", re.S)
"""The CLI's summary request (compaction; measured on CLI 2.1.337: docs/cli.md#bad-day)."""
_PLAN_EXITED = re.compile(r"exited plan mode|[Pp]lan mode is no longer active|[Yy]ou have exited")

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(_text_of(b.get("content")))
    return "\n".join(out)


class Request:
    """What a step's ``when`` looks at, read from one API request body."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.model = str(body.get("model", ""))
        messages = body.get("messages") or []
        self.ping = not body.get("tools") or body.get("max_tokens") == 1
        last: dict[str, Any] = next(
            (m for m in reversed(messages) if m.get("role") == "user"), {})
        content = last.get("content", "")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [
            b.get("text", "")
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        results = [
            _text_of(b.get("content"))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        last_raw = "\n".join(texts + results)
        self.user = _INTERRUPTED.sub("", _REMINDER.sub("", "\n".join(texts))).strip()
        found_note = _NOTIFICATION.findall("\n".join(texts))
        self.notification = found_note[-1] if found_note else ""
        self.tool_result = "\n".join(results).strip()
        self.summary = bool(_SUMMARY_REQUEST.search(self.user))
        self.context = "\n".join(_text_of(m.get("content")) for m in messages)
        system = body.get("system")
        system_text = _text_of(system) if not isinstance(system, str) else system
        everything = system_text + "\n" + self.context
        found = _PLAN_FILE.findall(everything)
        self.plan_file = found[-1] if found else ""
        self.mode = self._mode(messages, last_raw)

    @staticmethod
    def _mode(messages: list[dict[str, Any]], last_raw: str) -> str:
        # The CLI reminds the model of plan mode in user messages; the latest word wins.
        for m in reversed(messages):
            if m.get("role") == "assistant":
                continue
            text = _text_of(m.get("content"))
            active = [x.end() for x in _PLAN_ACTIVE.finditer(text)]
            exited = [x.end() for x in _PLAN_EXITED.finditer(text)]
            if active or exited:
                return "plan" if max(active or [-1]) > max(exited or [-1]) else "default"
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    t = _text_of(b.get("content"))
                    if "approved your plan" in t:
                        return "default"
        return "default"

    def groups(self, step: Step) -> dict[str, str]:
        """The named groups of the step's ``when`` patterns, as they matched this request:
        placeholders of its reply (``(?P<color>…)`` → ``{color}``), so a reply can say what
        the person picked (issue 42, point 1)."""
        out: dict[str, str] = {}
        for pattern, text in self._checks(step):
            m = re.search(pattern, text, re.S) if pattern is not None else None
            if m is not None:
                out.update({k: v for k, v in m.groupdict().items() if v is not None})
        return out

    def _checks(self, step: Step) -> list[tuple[str | None, str]]:
        w = step.when
        return [
            (w.user, self.user),
            (w.tool_result, self.tool_result),
            (w.context, self.context),
            (w.model, self.model),
            (w.notification, self.notification),
        ]

    def matches(self, step: Step) -> bool:
        w = step.when
        if w.summary != self.summary:
            return False
        for pattern, text in self._checks(step):
            if pattern is not None and not re.search(pattern, text, re.S):
                return False
        return w.mode is None or w.mode == self.mode


class ScriptState:
    """Which steps are used up; picks the step for each request (thread-safe)."""

    def __init__(self, script: Script, cwd: str) -> None:
        self.script = script
        self.cwd = cwd
        self.used: set[int] = set()
        self.failures: dict[int, int] = {}
        self.lock = threading.Lock()
        self.count = 0

    def pick(self, req: Request) -> int | None:
        with self.lock:
            self.count += 1
            for i, step in enumerate(self.script.steps):
                if i in self.used or not req.matches(step):
                    continue
                if step.fail is not None:
                    n = self.failures.get(i, 0) + 1
                    self.failures[i] = n
                    if n >= step.fail.times and not step.repeat:
                        self.used.add(i)
                elif not step.repeat:
                    self.used.add(i)
                return i
            return None


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer
    protocol_version = "HTTP/1.1"
    streaming = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _json(self, status: int, payload: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if headers is None and (status >= 500 or status == 429):
            headers = {"x-should-retry": "false"}
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._json(200, {"ok": True})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            if "count_tokens" in self.path:
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            else:
                self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": self.path}})
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
            req = Request(body)
        except (ValueError, TypeError, AttributeError) as e:
            self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": f"bad request: {e}"}})
            return
        self.streaming = bool(body.get("stream"))
        self.server.answer(self, req)


def _import_redact() -> None:
    from ..store import redact  # noqa: F401


class ScriptedServer(ThreadingHTTPServer):
    """The HTTP server; :meth:`answer` picks the step and writes the reply."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, script: Script, cwd: str, log_path: Path | None = None,
                 port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = ScriptState(script, cwd)
        self.log_path = log_path
        self._log_lock = threading.Lock()
        self._log_failed = False
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            # requests hold prompts and tool results: readable by their owner only
            fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(fd, 0o600)
            os.close(fd)
            # _record's import of the store (pydantic: 120 ms) ran inside the first request,
            # in front of the model's answer (figure 1: +35 ms to the plan card; measured with
            # benchmarks/_flowparts.py): made now, beside the CLI's start
            threading.Thread(target=_import_redact, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up is routine; anything else gets one line, not a traceback
        # (nobody drains the parent's stderr pipe, so tracebacks could fill it and block).
        err = sys.exc_info()[1]
        if isinstance(err, (ConnectionError, TimeoutError)):
            return
        print(f"scripted model: {type(err).__name__}: {err}", file=sys.stderr, flush=True)

    def _record(self, entry: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        from ..store.redact import redact  # secrets stay out of every log in the log folder

        line = json.dumps(redact(entry)) + "\n"
        try:
            with self._log_lock, self.log_path.open("a", encoding="utf-8") as f:
                f.write(line)
        except OSError as e:  # a full disk: the model still answers (the log is an aid)
            if not self._log_failed:
                self._log_failed = True
                print(f"scripted model: request log: {e}", file=sys.stderr, flush=True)

    def answer(self, h: _Handler, req: Request) -> None:
        dump = os.environ.get("PLAN_WIDGETS_SCRIPTED_DUMP")
        if dump:  # debugging aid: keep every request body
            Path(dump).mkdir(parents=True, exist_ok=True)
            n = len(list(Path(dump).iterdir()))
            (Path(dump) / f"{n:04d}.json").write_text(json.dumps(req.body, indent=1))
        entry: dict[str, Any] = {
            "t": time.time(), "model": req.model, "ping": req.ping, "mode": req.mode,
            "user": req.user[-2000:], "tool_result": req.tool_result[-2000:],
            "plan_file": req.plan_file,
            "tools": [t.get("name") for t in req.body.get("tools") or []][:80],
        }
        if req.ping:
            entry["step"] = None
            self._record(entry)
            self._write(h, events_for([Block(text="ok")], req, {}, "end_turn"))
            return
        i = self.state.pick(req)
        entry["step"] = i
        self._record(entry)
        if i is None:
            text = self.state.script.fallback
            if req.summary:
                text = ("<analysis>scripted</analysis>\n<summary>"
                        f"{self.state.script.summary}</summary>")
            blocks = [Block(text=text)]
            self._write(h, events_for(blocks, req, {}, "end_turn"))
            return
        step = self.state.script.steps[i]
        if step.delay:
            time.sleep(step.delay)
        names = {**req.groups(step), "plan_file": req.plan_file, "cwd": self.state.cwd,
                 "user": req.user, "tool_result": req.tool_result}
        if step.fail is not None and step.fail.status is not None:
            status = step.fail.status
            h._json(status, {"type": "error", "error": {
                "type": _ERROR_TYPES.get(status, "api_error"), "message": step.fail.message}},
                self._fail_headers(step))
            return
        evs = events_for(step.reply or [Block(text="(cut)")], req, names, step.stop_reason,
                         step.input_tokens)
        if step.fail is not None and step.fail.cut_after_events is not None:
            self._write(h, evs[: step.fail.cut_after_events], cut=True, interval=step.interval)
            return
        self._write(h, evs, interval=step.interval, headers=dict(step.headers))

    def _fail_headers(self, step: Step) -> dict[str, str]:
        """A status answer's retry headers (``retry-after``, ``x-should-retry``)."""
        fail = step.fail
        assert fail is not None
        out: dict[str, str] = {}
        should = fail.should_retry
        if should is None and self.state.script.retries == 0:
            should = False
        if should is not None:
            out["x-should-retry"] = "true" if should else "false"
        if fail.retry_after is not None:
            out["retry-after"] = f"{fail.retry_after:g}"
        return out

    @staticmethod
    def _write(h: _Handler, events: list[bytes], cut: bool = False,
               interval: float = 0.0, headers: dict[str, str] | None = None) -> None:
        if not h.streaming and not cut:  # e.g. the CLI's model check: one JSON message
            h._json(200, collapse(events))
            return
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("request-id", "req_" + uuid.uuid4().hex[:20])
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        if not cut:
            h.send_header("content-length", str(sum(len(e) for e in events)))
        else:
            h.send_header("connection", "close")
        h.end_headers()
        try:
            if interval:
                for e in events:
                    h.wfile.write(e)
                    h.wfile.flush()
                    time.sleep(interval)
            else:
                h.wfile.write(b"".join(events))
                h.wfile.flush()
        except OSError:
            return
        if cut:
            h.close_connection = True
            try:
                import socket

                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
