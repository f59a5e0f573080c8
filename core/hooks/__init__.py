"""Claude Code hooks: clawback's memory lifecycle inside Claude Code sessions.

``clawback hooks install`` writes clawback's entries into a Claude Code settings file
(:mod:`.settings`); Claude Code then runs ``clawback hook <event>`` at each lifecycle event with
the event's JSON on stdin (:mod:`.events`), and :mod:`.run` answers it: a brief at session start
(:mod:`.brief`), recall on every prompt (:mod:`.prompt_recall`), ingest when a session stops and
a memory flush before a compaction (:mod:`.capture`).

A hook runs inside someone's working session, on every prompt: nothing here may break or slow
that session. Every failure prints nothing, exits 0 and is written to the hooks log
(:mod:`.log`), which ``clawback hooks status`` and ``clawback health`` show.
"""
