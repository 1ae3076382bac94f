"""Words written for the model, and what the page says instead.

A refused or stopped tool call comes back as a tool result whose text is written for the
model: the CLI's own ("The user doesn't want to proceed with this tool use. The tool use was
rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what
you are doing…") or this package's (``agent/decisions.py``, ``agent/gate.py``: "No answer
came from the user within 3 s; Bash was not allowed. Stop and wait for the user."). A tool
line showed that text's first line (issue 42, point 5). Here each known text maps to what a
person reads; the table in docs/cli.md#words-for-the-model lists them. A text not in the
table (a tool's own error, the user's own feedback) is shown as it is.
"""

from __future__ import annotations

import re

from ..agent.gate import (
    EMPTY_PLAN_REFUSAL,
    KERNEL_PLAN_REFUSAL,
    NOTEBOOK_WRITE_REFUSAL,
    PLAN_MODE_REFUSAL,
)
from ..agent.plan_edits import FRESH_STOP


def _lead(template: str) -> re.Pattern[str]:
    """A pattern for a text made from ``template``: its first sentence, up to any ``{``."""
    return re.compile(re.escape(template.split("{", 1)[0].split(". ", 1)[0].strip()))


PAGE_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    # the CLI's (measured on CLI 2.1.332-2.1.337: an interrupt while a tool runs or waits)
    (re.compile(r"The user doesn't want to proceed with this tool use"),
     "not run: you stopped the turn"),
    (re.compile(r"\[Request interrupted by user[^\]]*\]"), "stopped: you interrupted"),
    # this package's answers to the CLI (agent/decisions.py Decision.cli_answer)
    (re.compile(r"No answer came from the user within ([\d.]+) s"),
     "not allowed: no answer came within {0} s"),
    (re.compile(r"No one can answer in this unattended run"),
     "not allowed: no one could answer in this unattended run, and no rule decided it"),
    (re.compile(r"The user interrupted; "), "not allowed: you interrupted"),
    (re.compile(r"No answer; "), "not allowed: no answer came"),
    (re.compile(r"The user denied this tool call\."), "denied by you"),
    # the gate's refusals (agent/gate.py)
    (_lead(PLAN_MODE_REFUSAL), "refused: plan mode is on, so nothing changes before you "
                               "approve a plan"),
    (_lead(KERNEL_PLAN_REFUSAL), "refused: plan mode is on, so the kernel's state does not "
                                 "change before you approve a plan"),
    (_lead(EMPTY_PLAN_REFUSAL), "refused: the plan file was empty; the agent was asked to "
                                "write it"),
    (re.compile(re.escape(NOTEBOOK_WRITE_REFUSAL.split("{path}", 1)[1].split(".", 1)[0])),
     "refused: this notebook is open in Jupyter; the agent was asked to propose a cell "
     "instead"),
    (_lead(FRESH_STOP), "stopped here: the plan runs in a fresh conversation"),
)


def for_the_page(text: str) -> str | None:
    """What a person reads for ``text``, a tool result written for the model; None when the
    text is not one of the known ones (show it as it is)."""
    for pattern, said in PAGE_WORDS:
        m = pattern.search(text)
        if m:
            return said.format(*m.groups())
    return None
