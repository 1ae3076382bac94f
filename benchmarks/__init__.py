"""Benchmarks of plan_widgets (issue 7): ``python -m benchmarks`` (see ``--help``).

Everything runs against the scripted model through a real kernel; clicks are sent over the
Jupyter protocol. Each figure is measured beside its anchor in the same run.
"""
