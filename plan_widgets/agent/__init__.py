"""The agent: one Claude Code session, through the one SDK seam (``seam.py``; ``sdk.py`` is
the only module that imports ``claude_agent_sdk``).

``session.py`` is the coordinator and its public API. It composes its parts (the lifecycle,
the runner, the gate and its host, modes, rewind, idle, handoff), each of which receives only
the few things it uses (``ports.py``), never the session. See ARCHITECTURE.md for one turn.
"""
