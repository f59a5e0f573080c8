"""MCP benchmark: ``memory_search`` round trips over stdio against ``clawback mcp``, on a seeded archive.

    .venv/bin/python bench/mcp_latency.py             # 200 sessions x 200 messages (~90 MB)
    .venv/bin/python bench/mcp_latency.py --mb 200    # the 200 MB corpus of bench/archive.py

Starts the real ``clawback mcp`` (the command Claude Code would run), speaks MCP to it over its
stdin/stdout, and prints the median and p95 of a ``tools/call memory_search`` round trip next to
baselines measured in the same run: a ``ping`` round trip over the same pipe (the protocol's own
cost), the same search through ``MemoryTools`` in this process (no protocol), and the archive's
``search()`` alone. Also the server's start-up, interleaved with a bare ``python -c pass``: spawn
to the first answer (``initialize``, or ``server/discover`` as Claude Code 2.1.328 opens) and to
the ``tools/list`` answer, with the stdio front answering them (what Claude Code waits for before
a session's first request; target, issue 32: within 150 ms) and with ``CLAWBACK_MCP_FRONT=0``
(the SDK answers once it and the index loaded); and, for the modern opening, spawn to the first
``memory_search`` answer, which waits for the SDK and the index either way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.home import Home
from clawback.core.ingest.sources import SourceRoot
from clawback.core.mcp.tools import MemoryTools
from clawback.core.records import Source
from clawback.core.search.engine import search
from clawback.core.spawning import clawback_command
from corpus import generate

ROUNDS = 9
#: the envelope Claude Code 2.1.328 puts in each request (the 2026-07-28 protocol)
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: as an installed clawback runs: with its bytecode cached
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


class Server:
    """``clawback mcp`` in a subprocess, asked one request at a time."""

    def __init__(self, home: Path, **env_vars: str) -> None:
        env = {**ENV, "CLAWBACK_HOME": str(home), **env_vars}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*clawback_command(), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.next = 0
        self.ready = 0.0
        self.listed = 0.0
        self.called = 0.0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next += 1
        message = {"jsonrpc": "2.0", "id": self.next, "method": method}
        if params is not None:
            message["params"] = params
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next:
                return answer

    def initialize(self) -> None:
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})  # fmt: skip
        self.ready = time.perf_counter() - self.started
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        self.request("tools/list")
        self.listed = time.perf_counter() - self.started

    def discover(self) -> None:
        """What Claude Code 2.1.328 sends first: ``server/discover``, then the listings, each
        with its envelope in ``_meta``; then the first ``memory_search``, which loads the SDK."""
        meta = {"_meta": ENVELOPE}
        self.request("server/discover", meta)
        self.ready = time.perf_counter() - self.started
        self.request("tools/list", meta)
        self.listed = time.perf_counter() - self.started
        call = {**meta, "name": "memory_search", "arguments": {"query": "sqlite"}}
        assert "result" in self.request("tools/call", call)
        self.called = time.perf_counter() - self.started

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def p50_p95(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(ordered):7.1f} / {p95:6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=200, help="messages per session")
    parser.add_argument("--mb", type=float, help="size the corpus in MB instead of --sessions")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    sessions = args.sessions
    if args.mb:
        sessions = max(1, int(args.mb * 1_000_000 / (args.messages * 2300)))

    work = Path(tempfile.mkdtemp(prefix="clawback-bench-mcp-"))
    root = work / "projects"
    planted = generate(root, sessions=sessions, messages=args.messages,
                       plant_every=max(1, sessions // 200))  # fmt: skip
    home = Home.open(work / "home")
    stats = home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "bench")])
    size = sum(p.stat().st_size for p in root.rglob("*.jsonl")) / 1e6
    print(f"archive: {sessions} sessions x {args.messages} messages, {size:.0f} MB, "
          f"{stats.entries:,} entries")  # fmt: skip

    rare = [p.phrase for p in planted[:: max(1, len(planted) // 20)] if p.place != "cjk"][:20]
    queries = {
        "rare phrase": rare,
        "common words": ["search index", "python error", "sqlite", "session memory"] * 5,
        "4-letter prefix": ["sear*", "inde*", "quer*", "comp*", "tran*"] * 4,
    }
    bare: list[float] = []
    rows = {"front": "1", "SDK alone": "0"}
    ready: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(ROUNDS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=ENV, check=True)
        bare.append((time.perf_counter() - started) * 1000)
        for row, switch in rows.items():
            for protocol in ("initialize", "server/discover"):
                server = Server(home.paths.home, CLAWBACK_MCP_FRONT=switch)
                if protocol == "initialize":
                    server.initialize()
                else:
                    server.discover()
                ready.setdefault(f"{row}, {protocol}", []).append(
                    (server.ready * 1000, server.listed * 1000, server.called * 1000)
                )
                server.close()
    print(f"start-up, {ROUNDS} runs interleaved, median (max) ms from spawn; python -c pass"
          f" {statistics.median(bare):.0f} ({max(bare):.0f})")  # fmt: skip
    print(f"  {'':27} {'first answer':>14} {'tools/list':>14} {'first memory_search':>20}")
    for row, samples in ready.items():
        cols = [[s[i] for s in samples] for i in range(3)]
        cells = [f"{statistics.median(c):6.0f} ({max(c):5.0f})" if max(c) else "" for c in cols]
        print(f"  {row:27} {cells[0]:>14} {cells[1]:>14} {cells[2]:>20}")

    server = Server(home.paths.home)
    server.initialize()
    tools = MemoryTools(home.db)
    for query in queries["common words"][:4]:  # warm the page cache for both sides alike
        server.request("tools/call", {"name": "memory_search", "arguments": {"query": query}})
        tools.search(query)
    ping = [timed(lambda: server.request("ping")) for _ in range(40)]
    print("memory_search (8 hits)   over stdio p50/p95 | in-process tools | search() | ping (ms)")
    everything: list[float] = []
    for name, batch in queries.items():
        stdio = [
            timed(lambda q=q: server.request(
                "tools/call", {"name": "memory_search", "arguments": {"query": q}}))
            for q in batch
        ]  # fmt: skip
        everything += stdio
        direct = [timed(lambda q=q: tools.search(q)) for q in batch]
        bare = [timed(lambda q=q: search(home.db, q, limit=8)) for q in batch]
        print(f"  {name:18} {p50_p95(stdio)} | {p50_p95(direct)} | {p50_p95(bare)} | "
              f"{p50_p95(ping)}")  # fmt: skip
    print(f"all queries over stdio: median {statistics.median(everything):.1f} ms "
          f"({len(everything)} calls)")  # fmt: skip
    server.close()
    home.close()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
