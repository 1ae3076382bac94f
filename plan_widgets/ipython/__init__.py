"""IPython: ``%%claude`` and ``%claude`` (``magics.py``, ``commands.py``), the session a cell
runs in (``obtain.py`` over the live-session table, ``registry.py``), resume, the terminal's
text view, and the kernel as the agent's context (``kernel/``: the tools it calls here).
"""
