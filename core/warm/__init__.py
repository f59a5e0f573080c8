"""The warm process: one per home, holding the model and the vectors, so that the fresh
processes Claude Code's hooks, ``clawback search`` and ``clawback chat`` turns start can ask it
instead of loading them (:mod:`.program`: what the process loads and answers; :mod:`.server`:
the socket and the lifecycle; :mod:`.nearest`: the chunks nearest a query, and the one decision
between asking and loading)."""
