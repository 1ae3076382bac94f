"""The Messages API's answer to one request: a script step's blocks as the SSE events the CLI
reads (or, for a non-streaming request, those events collapsed into one JSON message)."""

from __future__ import annotations

import json
import uuid
from typing import Any, Protocol

from ._script import Block, fill


class Request(Protocol):
    """What a reply needs of the request it answers (the server's parsed request body)."""

    body: dict[str, Any]
    model: str


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


_FILLER = (
    "Streaming **Markdown** keeps arriving: a sentence, a `code span`, and a list item.\n\n"
    "- one point\n- another point\n\n"
)


def _texts(block: Block, names: dict[str, str]) -> list[str]:
    if block.text_size is not None:
        reps = block.text_size // len(_FILLER) + 1
        text = (_FILLER * reps)[: block.text_size]
    else:
        text = fill(block.text or "", names)
    n = block.deltas or len(text) // 40
    n = max(1, min(n, len(text)))
    # Exactly n pieces, sizes differing by at most one.
    size, extra = divmod(len(text), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(text[pos : pos + step])
        pos += step
    return out


def events_for(step_blocks: list[Block], req: Request, names: dict[str, str],
               stop_reason: str | None, input_tokens: int | None = None) -> list[bytes]:
    """The SSE events of one reply (``input_tokens``: the usage it reports, else about a
    quarter of the request's size)."""
    msg_id = "msg_" + uuid.uuid4().hex[:24]
    in_tokens = input_tokens or max(1, len(json.dumps(req.body.get("messages", []))) // 4)
    out_chars = 0
    evs = [
        _sse("message_start", {
            "type": "message_start",
            "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": req.model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": in_tokens, "output_tokens": 1,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            },
        })
    ]
    has_tool = False
    for index, block in enumerate(step_blocks):
        if block.tool is not None:
            has_tool = True
            tool_input = fill(block.input, names)
            raw = json.dumps(tool_input)
            out_chars += len(raw)
            evs.append(_sse("content_block_start", {
                "type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:22],
                                  "name": block.tool, "input": {}},
            }))
            evs.append(_sse("content_block_delta", {
                "type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": raw},
            }))
        elif block.thinking is not None:
            out_chars += len(block.thinking)
            evs += _thinking(index, fill(block.thinking, names))
        else:
            evs.append(_sse("content_block_start", {
                "type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""},
            }))
            for piece in _texts(block, names):
                out_chars += len(piece)
                evs.append(_sse("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                }))
        evs.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    reason = stop_reason or ("tool_use" if has_tool else "end_turn")
    evs.append(_sse("message_delta", {
        "type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": max(1, out_chars // 4)},
    }))
    evs.append(_sse("message_stop", {"type": "message_stop"}))
    return evs


def _thinking(index: int, text: str) -> list[bytes]:
    """A thinking block as the API streams it: thinking deltas, then its signature (the CLI
    sends the signed block back on later requests)."""
    pieces = [text[i:i + 80] for i in range(0, len(text), 80)] or [""]
    return [
        _sse("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": {"type": "thinking", "thinking": "",
                                                       "signature": ""}}),
        *(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                       "delta": {"type": "thinking_delta", "thinking": p}})
          for p in pieces),
        _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "signature_delta",
                                               "signature": "scripted-" + uuid.uuid4().hex}}),
    ]


def collapse(events: list[bytes]) -> dict[str, Any]:
    """The non-streaming Message that a list of SSE events adds up to."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for raw in events:
        data = json.loads(raw.decode().split("data: ", 1)[1])
        t = data["type"]
        if t == "message_start":
            message = dict(data["message"], content=[])
        elif t == "content_block_start":
            message["content"].append(dict(data["content_block"]))
        elif t == "content_block_delta":
            block, delta = message["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif t == "message_delta":
            message.update(data["delta"])
            message["usage"] = {**message.get("usage", {}), **data.get("usage", {})}
    for index, text in partial.items():
        message["content"][index]["input"] = json.loads(text)
    return message
