"""The one render path: untrusted text (plans, tool inputs, model output, reprs) becomes safe
HTML or plain text here and nowhere else (``markdown.py``, ``engine.py``); diffs, tables,
decisions' shared description and the static history build on it.
"""
