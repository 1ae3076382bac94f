"""Importing the SDK leaves out the IRI grammar nothing here uses, and changes nothing else
(plan_widgets/agent/sdk_import.py): each case in a fresh interpreter, as a kernel imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

PROBE = """
import sys, time
{before}
t = time.process_time()
import plan_widgets.agent.sdk
cpu = time.process_time() - t
import jsonschema
compiled_at_import = "lark" in sys.modules
stand_in_left = "rfc3987_syntax" in sys.modules
checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
answers = [checker.conforms(v, f) for v in ("http://example.com/\\u00fc", "not an iri", "a b")
           for f in ("iri", "iri-reference")]
import rfc3987_syntax, json
print(json.dumps(dict(compiled=compiled_at_import, left=stand_in_left, answers=answers,
                      stand_in=hasattr(rfc3987_syntax, "_plan_widgets_stand_in"),
                      compiled_later="lark" in sys.modules, cpu=cpu)))
"""


def _run(before: str = "") -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(before=before)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return dict(json.loads(out))


def test_the_grammar_is_compiled_at_its_first_use_and_answers_as_before() -> None:
    pytest.importorskip("rfc3987_syntax")  # (installed with JupyterLab: the test group has it)
    got = _run()
    assert not got["compiled"], "importing the SDK compiled rfc3987_syntax's grammar"
    assert not got["left"], "the stand-in stayed in sys.modules"
    assert not got["stand_in"] and got["compiled_later"]  # the real module, once used
    # jsonschema's iri checks answer as they do with the real module imported first
    plain = _run(before="import rfc3987_syntax")
    assert plain["compiled"]
    assert got["answers"] == plain["answers"] == [True, True, False, False, False, False]


def test_nothing_is_done_once_jsonschema_was_imported() -> None:
    pytest.importorskip("rfc3987_syntax")
    got = _run(before="import jsonschema")
    assert got["compiled"] and got["left"] and not got["stand_in"]
