"""Issue 34 end to end: the agent as its user configured it.

A real kernel over the Jupyter protocol, the real CLI bundled with the SDK, the scripted model
on 127.0.0.1. That an option reached the CLI is read where the CLI shows it: its command line
(``/proc/<pid>/cmdline``), its ``initialize`` answer, and the requests the scripted model
received (kept whole with ``PLAN_WIDGETS_SCRIPTED_DUMP``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import psutil
import pytest
from kernel import Kernel, requests_of, write_script

pytestmark = pytest.mark.e2e

SCRIPT = """\
steps:
  - reply:
      - text: "Done."
    repeat: true
"""
COMMAND = ("---\ndescription: Greet someone warmly\nargument-hint: NAME\n---\n"
           "Say hello to $ARGUMENTS.\n")
SKILL = "---\nname: tidy\ndescription: Tidy a data frame's columns\n---\nUse snake_case.\n"


@pytest.fixture
def project(workdir: Path) -> Path:
    """A project with its own command (.claude/commands/greet.md) and skill (tidy)."""
    (workdir / ".claude" / "commands").mkdir(parents=True)
    (workdir / ".claude" / "commands" / "greet.md").write_text(COMMAND)
    (workdir / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (workdir / ".claude" / "skills" / "tidy" / "SKILL.md").write_text(SKILL)
    (workdir / "data").mkdir()
    write_script(workdir, SCRIPT, "plain.yaml")
    return workdir


@pytest.fixture
def k(project: Path):
    kernel = Kernel(project, env={"PLAN_WIDGETS_SCRIPTED_DUMP": str(project / "bodies")})
    try:
        kernel.execute("%load_ext plan_widgets\nimport plan_widgets")
        yield kernel
    finally:
        try:
            kernel.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                           timeout=30, allow_error=True)
        finally:
            kernel.shutdown()


def bodies(workdir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((workdir / "bodies").glob("*.json"))]


def tool_results(workdir: Path) -> list[str]:
    """The text of every tool result the model received, whole (the request bodies)."""
    out = []
    for body in bodies(workdir):
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) \
                    else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    c = block.get("content")
                    out.append(c if isinstance(c, str) else "".join(
                        p.get("text", "") for p in c or [] if isinstance(p, dict)))
    return out


def cli_flags(k: Kernel, name: str = "default") -> dict[str, str]:
    """The CLI's command line as flag → value (``--effort=high``)."""
    pid = int(k.eval(f"plan_widgets.get({name!r}).client.pid"))
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    flags = {}
    for a, after in zip(argv, [*argv[1:], ""], strict=True):
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            flags[name] = value if eq else ("" if after.startswith("--") else after)
    return flags


def test_options_from_config_and_cell_reach_the_cli(k: Kernel, project: Path) -> None:
    k.execute('%config ClaudeMagics.agent_options = {"max_turns": 7, "hooks": {}, '
              '"mcp_servers": {"kernel": {"type": "stdio", "command": "true"}}}')
    # the administrator's policy (as a config file sets it) still applies over every option
    k.execute("from plan_widgets.ipython import policy\npolicy.current().denied_tools = ['Grep']")
    out = k.execute("%%claude --scripted plain.yaml --effort high --add-dir data "
                    "--allowed-tools 'Read,Grep' --append-system-prompt XYZZY-APPENDED\nhello")
    said = out["text"]
    # the product's own parts win, each said in one line
    assert "option hooks set aside: the product's PreToolUse screen" in said
    assert "option mcp_servers['kernel'] set aside: that name is the kernel tools' server" in said
    flags = cli_flags(k)
    assert flags["--max-turns"] == "7" and flags["--effort"] == "high"
    assert flags["--allowedTools"] == "Read,Grep" and flags["--disallowedTools"] == "Grep"
    assert flags["--add-dir"] == str(project / "data")
    turn = [b for b in bodies(project) if b.get("tools")][-1]
    assert turn["output_config"]["effort"] == "high"
    names = {t["name"] for t in turn["tools"]}
    assert "Read" in names and "Grep" not in names  # the policy's deny wins over allowed
    system = json.dumps(turn["system"])
    assert "XYZZY-APPENDED" in system and "Tools into the kernel" in system  # both kept
    servers = json.loads(flags["--mcp-config"])["mcpServers"]
    assert servers == {"kernel": {"type": "sdk", "name": "kernel"}}  # the product's, not theirs
    status = k.execute("%claude status")["text"]
    assert "agent options: " in status and "effort='high'" in status
    assert "max_turns=7" in status and "option hooks set aside" in status
    # the same options again are the live session's; others need a new one: one line says so
    out = k.execute("%%claude --effort high --add-dir data --allowed-tools Read,Grep\nagain")
    assert "agent options apply" not in out["text"] and "Traceback" not in out["text"]
    out = k.execute("%%claude --effort low\nagain", allow_error=True)
    assert out["reply"]["ename"] == "UsageError"  # the cell fails, in one line
    assert "runs with effort='high'; agent options apply when a session starts: add --new" \
        in out["text"]


def test_a_typo_names_the_nearest_option(k: Kernel, project: Path) -> None:
    k.execute('%config ClaudeMagics.agent_options = {"efort": "high"}')
    out = k.execute("%%claude --scripted plain.yaml\nhello", allow_error=True)
    assert out["text"].strip() == ("UsageError: %%claude: unknown option 'efort': did you mean "
                                   "'effort'?")
    assert "Traceback" not in out["text"]
    out = k.execute("try:\n    plan_widgets.session('py', scripted='plain.yaml', "
                    "add_dir=['data'])\nexcept Exception as e:\n    print(type(e).__name__, e)")
    assert "OptionError unknown option 'add_dir': did you mean 'add_dirs'?" in out["text"]


def test_python_takes_the_sdks_options_object(k: Kernel, project: Path) -> None:
    out = k.execute(
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        "s = plan_widgets.session('py', scripted='plain.yaml', options=ClaudeAgentOptions("
        "effort='low', max_turns=3, can_use_tool=print), setting_sources=['project'], "
        "agents={'reviewer': {'description': 'Reviews diffs', 'prompt': 'You review.'}}, "
        "mcp_servers={'files': {'type': 'stdio', 'command': 'true'}})\n"
        "t = s.ask('hello')\nprint(await s.wait(60))")
    assert "option can_use_tool set aside: the permission callback is the product's gate" \
        in out["text"]
    flags = cli_flags(k, "py")
    assert flags["--effort"] == "low" and flags["--max-turns"] == "3"
    assert flags["--setting-sources"] == "project"
    servers = json.loads(flags["--mcp-config"])["mcpServers"]
    assert servers["files"] == {"type": "stdio", "command": "true"} and "kernel" in servers
    agents = k.eval("[a.get('name') for a in plan_widgets.get('py').client.server_info['agents']]")
    assert "'reviewer'" in agents  # a subagent given as a dict, as the CLI reports it


def test_commands_and_skills_are_listed_and_a_slash_prompt_is_checked(
        k: Kernel, project: Path) -> None:
    k.execute("%%claude --scripted plain.yaml\nhello")
    listed = k.execute("%claude commands")["text"]
    lines = listed.splitlines()
    greet = next(line for line in lines if line.strip().startswith("/greet"))
    assert "/greet NAME" in greet and "[project]" in greet and "Greet someone warmly" in greet
    assert "(project)" not in greet  # the CLI's ending is the source column
    skills = lines.index(next(line for line in lines if line.startswith("skills (")))
    tidy = next(i for i, line in enumerate(lines) if line.strip().startswith("/tidy"))
    assert tidy > skills and "[project]" in lines[tidy] and "Tidy a data frame" in lines[tidy]
    assert any(line.strip().startswith("/compact") and "[built-in]" in line for line in lines)
    # a prompt naming no command: one line, nothing sent; --verbatim sends it as text
    before = len(requests_of(project))
    out = k.execute("%%claude\n/srv/data explain this path", allow_error=True)
    assert out["reply"]["status"] == "error"  # nothing was sent: the cell fails
    shown = out["shown"] + "\n".join(k.markdown_outputs()) + k.html_text()
    assert "/srv is not a command or skill of this session (%claude commands lists them)" \
        in shown
    assert len(requests_of(project)) == before
    k.execute("%%claude --verbatim\n/srv/data explain this path")
    assert any(r["user"].startswith("/srv/data explain") for r in requests_of(project))
    # a command runs (the CLI expands it); --verbatim sends even a command's name as text
    k.execute("%%claude\n/greet Ada")
    assert "Say hello to Ada." in requests_of(project)[-1]["user"]
    k.execute("%%claude --verbatim\n/greet Ada")
    assert requests_of(project)[-1]["user"] == "/greet Ada"


def complete(k: Kernel, code: str, cursor: int | None = None) -> tuple[list[str], str]:
    """A ``complete_request`` as a frontend sends it: the matches, and the text they replace."""
    cursor = len(code) if cursor is None else cursor
    msg_id = k.kc.complete(code, cursor)
    reply = k.kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = k.kc.get_shell_msg(timeout=30)
    c = reply["content"]
    return c["matches"], code[c["cursor_start"]:c["cursor_end"]]


def test_tab_completes_in_a_claude_cell(k: Kernel, project: Path) -> None:
    (project / "data" / "prices.csv").write_text("a\n")
    # before any session: the magic's options and values, the project's commands, its paths
    assert complete(k, "%%claude --mo") == (["--mode", "--model"], "--mo")
    assert complete(k, "%%claude --mode ac") == (["acceptEdits"], "ac")
    assert complete(k, "%%claude --effort ")[0] == ["low", "medium", "high", "xhigh", "max"]
    assert complete(k, "%%claude\nplease /gr") == (["/greet"], "/gr")
    assert complete(k, "%%claude\nlook at @data/pr") == (["@data/prices.csv"], "@data/pr")
    matches, _ = complete(k, "%%claude\n@da")
    assert matches == ["@data/"]
    assert complete(k, "%%claude --add-dir da") == (["data/"], "da")
    assert complete(k, "%%claude --cwd da") == (["data/"], "da")
    assert complete(k, "%%claude --cwd data/") == (["data/prices.csv"], "data/")
    assert complete(k, "%%claude --scripted plai") == (["plain.yaml"], "plai")
    assert complete(k, "%%claude --model ")[0] == ["opus", "sonnet", "haiku", "default"]
    assert complete(k, "%%claude --plan-model so") == (["sonnet"], "so")
    # none of that started a CLI or a session, nor asked the model anything
    assert k.eval("plan_widgets.get()") == "None" and requests_of(project) == []
    assert children(k) == []
    # with a session: what its CLI reported (built-in commands and skills too), answered
    # from what is known: also while its CLI cannot answer anything (stopped)
    k.execute("%%claude --scripted plain.yaml\nhello")
    models = reported_models(k)
    assert models, "the CLI reported no models"
    cli = psutil.Process(int(k.eval("plan_widgets.get().cli_pid")))
    cli.suspend()
    try:
        assert complete(k, "%%claude --model ")[0] == list(dict.fromkeys(
            [*models, "opus", "sonnet", "haiku", "default"]))
        assert "/compact" in complete(k, "%%claude\n/comp")[0]
        assert complete(k, "%%claude\n/ti")[0] == ["/tidy"]
        assert complete(k, "%%claude --session ")[0] == ["default"]
    finally:
        cli.resume()
    # not a %%claude cell: the usual completions
    k.execute("grape_fruit = 1")
    assert "grape_fruit" in complete(k, "grape_f")[0]


def children(k: Kernel) -> list[str]:
    """The kernel's child processes (a CLI, a scripted model), as command lines."""
    kernel = psutil.Process(int(k.eval("__import__('os').getpid()")))
    return [" ".join(p.cmdline())[:120] for p in kernel.children(recursive=True)]


def reported_models(k: Kernel) -> list[str]:
    """The model values the session's CLI reported in its ``initialize`` answer."""
    listed = k.eval("[m.get('value') for m in plan_widgets.get().client.server_info"
                    ".get('models') or []]")
    return [str(v) for v in ast.literal_eval(listed)]


TOOLS = '''
import plan_widgets

@plan_widgets.tool
def revenue(region: str, year: int = 2024) -> str:
    """Total revenue of a region in a year."""
    return f"{region} {year}: 1234.5 (token sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345)"

@plan_widgets.tool(changes=True)
def save_note(text: str) -> str:
    """Save a note to the notebook's notes list."""
    notes.append(text)
    return f"saved {text!r}"

@plan_widgets.tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("the sensor\\nis offline")

@plan_widgets.tool
def huge() -> str:
    """Too much text."""
    return "x" * 500_000

notes = []
'''


def results(workdir: Path) -> str:
    return "\n".join(r.get("tool_result") or "" for r in requests_of(workdir))


def settle(k: Kernel) -> str:
    return k.execute("print(await plan_widgets.get().wait(60))", timeout=90)["text"].strip()


def test_a_notebook_function_is_a_tool(k: Kernel, project: Path) -> None:
    k.execute(TOOLS)
    listed = k.execute("%claude tools")["text"]
    assert "revenue(region, year) [reads only] Total revenue of a region in a year." in listed
    assert "save_note(text) [changes: asks first, not in plan mode]" in listed
    k.execute("%%claude --scripted notebook_tools.yaml --plan\nplan the revenue", timeout=120)
    assert settle(k) == "idle"
    got = results(project)
    assert "north 2023: 1234.5" in got and "sk-ant-api03" not in got  # redacted, as kernel tools
    assert "Plan mode is on: mcp__kernel__save_note would change" in got
    assert k.eval("notes") == "[]"
    # a changing one asks on its card; redefined first: the next call runs the new body
    k.execute("%claude plan off")
    k.execute("@plan_widgets.tool(changes=True)\ndef save_note(text: str) -> str:\n"
              "    '''Save a note.'''\n    notes.append(text.upper())\n    return 'saved it'")
    out = k.execute("%%claude\nsave a note", timeout=120)
    assert "paused for your decision (tool)" in out["shown"]
    assert "Run the notebook function save_note?" in "\n".join(k.markdown_outputs()) + \
        k.html_text()
    k.click(k.wait_widget("ButtonModel", description="Allow"))
    assert settle(k) == "idle"
    assert k.eval("notes") == "['HELLO FROM THE AGENT']"
    # a raising, a huge, a mistyped call: one line or a cut result; the turn goes on
    k.execute("%%claude\ntry the odd tools", timeout=120)
    assert settle(k) == "idle"
    got = results(project)
    assert "explode raised RuntimeError: the sensor is offline" in got
    # 500,000 characters cut to 20,000 (docs/notebook-context.md), as the model received it
    [cut] = {t for t in tool_results(project) if t.startswith("x" * 100)}
    assert len(cut) <= 20_000 and cut.endswith("x… [480,040 more characters]"), len(cut)
    # a mistyped input is refused by the schema from the type hints (the CLI checks it)
    assert "Input validation error: 5 is not of type 'string'" in got
    assert "ODD DONE" in "\n".join(k.markdown_outputs())
    assert k.eval("1 + 1") == "2"
    # a tool defined after the CLI started: the next cell restarts it with the new list
    k.execute('@plan_widgets.tool\ndef late_tool(n: int) -> str:\n    """Late."""\n'
              "    return f'late {n}'")
    assert "not yet served to session 'default'" in k.execute("%claude tools")["text"]
    out = k.execute("%%claude\ncall the late tool", timeout=120)
    assert "The notebook's tools changed: the CLI restarts with them" in out["text"]
    assert settle(k) == "idle"
    assert "LATE: late 3" in "\n".join(k.markdown_outputs())


def test_an_interrupted_tool_call_stops_the_function(k: Kernel, project: Path) -> None:
    """A notebook function that never returns: interrupting the turn stops its thread (it
    would spin until its 30 s bound), and the kernel answers meanwhile."""
    k.execute("import threading\nspins = [0]\n@plan_widgets.tool\ndef spin() -> str:\n"
              "    '''Spins.'''\n    while True:\n        spins[0] += 1")
    k.execute("%%claude --scripted notebook_tools.yaml --background\nspin forever")
    k.wait_until(lambda: k.eval("spins[0] > 0") == "True", 60, "the tool to run")
    k.execute("%claude interrupt")
    assert settle(k) == "idle"
    out = k.execute("import time\na = spins[0]\ntime.sleep(1)\nprint(spins[0] - a, "
                    "[t.name for t in threading.enumerate() if 'budget' in t.name])")
    assert out["text"].strip() == "0 []"
