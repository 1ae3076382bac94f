"""The kernel as the agent's context: the tools the agent calls in this kernel (``tools``), what
they read (``inspection``, ``describe``), how they run user code safely (``budget``,
``runcode``)."""
