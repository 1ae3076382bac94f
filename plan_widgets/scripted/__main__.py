"""``python -m plan_widgets.scripted SCRIPT [--log FILE] [--port N]``: serve a script.

Prints ``PORT <n>`` once listening, and exits when its standard input closes (so it never
outlives the process that started it) or on SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path

from ._script import ScriptError, load_script
from ._server import ScriptedServer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="plan-widgets-scripted", description=__doc__.splitlines()[0])
    p.add_argument("script", help="YAML or JSON script")
    p.add_argument("--log", default=None, help="write one JSON line per request here")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free)")
    p.add_argument("--cwd", default=None, help="the {cwd} placeholder (default: current dir)")
    p.add_argument("--no-stdin", action="store_true", help="do not exit when stdin closes")
    a = p.parse_args(argv)
    try:
        script = load_script(a.script)
    except ScriptError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    server = ScriptedServer(script, os.path.abspath(a.cwd or os.getcwd()),
                            Path(a.log) if a.log else None, a.port)
    print(f"PORT {server.port}", flush=True)
    if not a.no_stdin:

        def watch_stdin() -> None:
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except (OSError, ValueError):
                pass
            server.shutdown()

        threading.Thread(target=watch_stdin, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
