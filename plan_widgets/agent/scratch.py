"""A private temporary folder for one CLI process, removed when the session ends.

MEASURED (CLI 2.1.332): the Claude Code CLI writes under ``$TMPDIR`` and leaves it there after
a clean exit: ``claude-<uid>/<cwd with dashes>/<session id>/`` (``started``, ``tasks``),
``claude-<uid>/fswatch-probe-*/`` and ``cc-socks/<pid>.sock``. Giving each CLI its own
``TMPDIR`` (a short path: the sockets' paths must stay under 108 bytes, so not inside the log
folder) and removing it when the session ends leaves nothing behind after a clean stop.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

PREFIX = "plan_widgets-"


class ScratchDir:
    """``env()`` goes into the CLI's environment; ``remove()`` when the CLI has exited."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX))  # 0700

    def env(self) -> dict[str, str]:
        p = str(self.path)
        return {"TMPDIR": p, "TMP": p, "TEMP": p}

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
