"""Secrets (API keys, tokens, passwords) are redacted before an event is written: they never
reach the log file."""

from __future__ import annotations

import re
from typing import Any

from ..model.events import Event, dump_event

REDACTED = "[redacted]"


_SECRET_VALUE = re.compile(
    r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{8,}"
    r"|(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{20,}"
    r"|\b[Bb]earer\s+(?=[A-Za-z0-9._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{12,}=*"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
)
_SECRET_ASSIGN = re.compile(
    # NAME=value, NAME = "value", NAME: value, "NAME": "value" (the bare API_KEY / TOKEN too)
    # (a name ending in TOKENS, such as MAX_TOKENS, counts tokens: it is no secret)
    # The name is a whole word of [A-Z0-9_] holding a keyword followed by "_" or its end:
    # checked by a lookahead, then taken in one greedy run. (Spelled as one backtracking
    # pattern, a word such as "TOKEN_" * n tried every keyword in it against every tail:
    # quadratic, and minutes of a frozen kernel for a 240 KB tool input.)
    r"\b(?=[A-Z0-9_]*?(?:API_?KEYS?|TOKEN|SECRETS?|PASSWORDS?|PASSWD)(?:_|\b))"
    r"([A-Z0-9_]+)\b"
    r"([\"']?[ \t]*[=:][ \t]*)"
    r"(\"[^\"]*\"|'[^']*'|[^\s\"']+)"
)
_SECRET_HEADER = re.compile(
    # Authorization: Bearer <anything>, x-api-key: <key> (a scheme, or a longish credential,
    # so that code such as {"Authorization": f"Bearer {token}"} is left alone)
    r"(?i:\b((?:proxy-)?authorization|x-api-key)([\"']?[ \t]*[:=][ \t]*[\"']?))"
    r"(?:((?i:bearer|basic|token|digest)[ \t]+)(?![{$<])([^\s\"'<>,;]+)"
    r"|(?![{$<])([^\s\"'<>,;]{8,}))"
)
_SECRET_KEY = re.compile(
    r"api[_\-]?key|authorization|password|passwd|secret|credential|cookie"
    r"|private[_\-]?key|access[_\-]?key"
    r"|(?:^|[_\-.])(?:access|refresh|auth|id|session|bearer)?[_\-]?token(?:$|[_\-.])",
    re.IGNORECASE,
)
# cheap screen over the serialized line: only lines that match get the full walk
_SUSPECT = re.compile(
    _SECRET_VALUE.pattern + "|" + _SECRET_ASSIGN.pattern + "|" + _SECRET_HEADER.pattern
    + r"|(?i:api[_\-]?key|authoriz|passw|secret|credential|cookie|private|access|token)"
)


def sensitive_key(key: str) -> bool:
    """Whether a dict key names a secret (api_key, token, authorization, password, ...)."""
    return bool(_SECRET_KEY.search(key))


def redact_text(text: str) -> str:
    """``text`` with anything that looks like an API key or token replaced by [redacted]."""
    text = _SECRET_HEADER.sub(
        lambda m: m.group(1) + m.group(2) + (m.group(3) or "") + REDACTED, text
    )
    text = _SECRET_VALUE.sub(REDACTED, text)
    return _SECRET_ASSIGN.sub(_assigned, text)


def _assigned(m: re.Match[str]) -> str:
    value = m.group(3)
    quote = value[0] if value[0] in "\"'" else ""
    return m.group(1) + m.group(2) + quote + REDACTED + quote


def redact(value: Any) -> Any:
    """A copy of ``value`` (JSON-like data) with secrets redacted; ``value`` if none."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for k, v in value.items():
            if isinstance(v, str) and v and isinstance(k, str) and sensitive_key(k):
                new: Any = REDACTED
            else:
                new = redact(v)
            if new is not v and new != v:
                if out is None:
                    out = dict(value)
                out[k] = new
        return value if out is None else out
    if isinstance(value, (list, tuple)):
        items = [redact(v) for v in value]
        if any(a is not b and a != b for a, b in zip(items, value, strict=True)):
            return items
        return value
    return value


def redact_event(event: Event) -> Event:
    """``event`` with secrets redacted (the same object if it holds none)."""
    if not _SUSPECT.search(dump_event(event)):
        return event
    data = event.model_dump()
    clean = redact(data)
    if clean is data:
        return event
    return type(event).model_validate(clean)


