"""A seeded, realistic Claude Code corpus for benchmarks and the crash tests.

Writes ``<root>/<project>/<session>.jsonl`` files shaped like Claude Code 2.1's transcripts
(user/assistant lines with text, thinking, tool_use and tool_result blocks, queue-operation and
summary lines, sidechain sub-agent files) and plants unique phrases in each place a person may
search: prompts, replies, thinking, tool inputs, tool outputs, sidechains and CJK text. Returns
the planted phrases so recall can be checked.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from pathlib import Path

WORDS = [
    "the",
    "index",
    "search",
    "session",
    "memory",
    "transcript",
    "compaction",
    "summary",
    "token",
    "window",
    "prompt",
    "reply",
    "python",
    "sqlite",
    "table",
    "query",
    "column",
    "value",
    "file",
    "path",
    "folder",
    "config",
    "test",
    "build",
    "deploy",
    "error",
    "function",
    "class",
    "module",
    "import",
    "return",
    "async",
    "await",
    "worker",
    "thread",
    "queue",
    "lock",
    "commit",
    "offset",
    "parser",
    "format",
    "line",
    "json",
    "field",
    "string",
    "number",
    "list",
    "dict",
    "cache",
    "budget",
    "recall",
    "snippet",
    "score",
    "rank",
    "filter",
    "source",
    "project",
    "branch",
    "merge",
    "review",
    "change",
    "issue",
    "fix",
    "bug",
    "feature",
    "release",
    "database",
    "migration",
    "schema",
    "version",
    "server",
    "client",
    "request",
    "response",
    "status",
    "header",
    "body",
]
CJK = "数据库索引搜索会话记忆压缩摘要模型窗口提示回复配置测试构建部署错误函数模块日本語検索"
PLACES = ("prompt", "reply", "thinking", "tool_input", "tool_output", "sidechain", "cjk")


@dataclass(frozen=True)
class Planted:
    phrase: str
    place: str
    session_id: str


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(6, 18)) for _ in range(sentences))


def _ts(base: float, offset: float) -> str:
    import datetime as dt

    moment = dt.datetime.fromtimestamp(base + offset, dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def generate(
    root: Path,
    *,
    sessions: int,
    messages: int,
    seed: int = 7,
    plant_every: int = 1,
    reply_sentences: int = 6,
) -> list[Planted]:
    """Write the corpus under ``root``; ``messages`` counts user+assistant turns per session."""
    rng = random.Random(seed)
    planted: list[Planted] = []
    base = 1_760_000_000.0
    for s in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        project = root / f"-home-user-project{s % 20}"
        project.mkdir(parents=True, exist_ok=True)
        cwd = f"/home/user/project{s % 20}"
        plant = s % plant_every == 0
        marks = {place: f"zq{place.replace('_', '')}{s}x{seed}" for place in PLACES}
        marks["cjk"] = "".join(rng.choice(CJK) for _ in range(2)) + f"{s}号"
        if plant:
            planted.extend(
                Planted(marks[p], p, sid) for p in PLACES if p not in ("sidechain", "cjk")
            )
        lines: list[str] = []
        t = base + s * 7200.0
        parent = None
        common = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
                  "version": "2.1.328", "gitBranch": "main"}  # fmt: skip
        for m in range(messages // 2):
            t += rng.uniform(5, 90)
            u1, u2, u3, u4 = (str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(4))
            prompt = _sentence(rng, rng.randint(8, 30))
            if plant and m == 0:
                prompt += f" Please check {marks['prompt']} and also {marks['cjk']}的问题."
                planted.append(Planted(marks["cjk"], "cjk", sid))
            lines.append(json.dumps({"type": "queue-operation", "operation": "enqueue",
                                     "timestamp": _ts(t, 0), "sessionId": sid, "content": prompt}))  # fmt: skip
            lines.append(json.dumps({**common, "parentUuid": parent, "type": "user", "uuid": u1,
                                     "timestamp": _ts(t, 0.1),
                                     "message": {"role": "user", "content": prompt}}, ensure_ascii=False))  # fmt: skip
            thinking = _paragraph(rng, 2) + (f" {marks['thinking']}" if plant and m == 1 else "")
            reply = _paragraph(rng, reply_sentences) + (
                f" {marks['reply']}" if plant and m == 2 else ""
            )
            command = f"grep -rn {rng.choice(WORDS)} src/" + (
                f" # {marks['tool_input']}" if plant and m == 3 else ""
            )
            output = "\n".join(
                f"src/{rng.choice(WORDS)}.py:{rng.randint(1, 900)}: {_sentence(rng, 8)}"
                for _ in range(rng.randint(3, 12))
            ) + (f"\nnote: {marks['tool_output']}" if plant and m == 4 else "")
            tool_id = "toolu_" + u2.replace("-", "")[:22]
            lines.append(json.dumps({**common, "parentUuid": u1, "type": "assistant", "uuid": u2,
                "timestamp": _ts(t, 2.0),
                "message": {"id": "msg_" + u2[:12], "type": "message", "role": "assistant",
                            "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                            "usage": {"input_tokens": 1200, "output_tokens": 300},
                            "content": [{"type": "thinking", "thinking": thinking, "signature": "x"},
                                        {"type": "tool_use", "id": tool_id, "name": "Bash",
                                         "input": {"command": command, "description": "search"}}]}}))  # fmt: skip
            lines.append(json.dumps({**common, "parentUuid": u2, "type": "user", "uuid": u3,
                "timestamp": _ts(t, 3.0),
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                         "content": output}]}}))  # fmt: skip
            lines.append(json.dumps({**common, "parentUuid": u3, "type": "assistant", "uuid": u4,
                "timestamp": _ts(t, 6.0),
                "message": {"id": "msg_" + u4[:12], "type": "message", "role": "assistant",
                            "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                            "usage": {"input_tokens": 1500, "output_tokens": 400},
                            "content": [{"type": "text", "text": reply}]}}))  # fmt: skip
            parent = u4
        lines.append(
            json.dumps({"type": "summary", "summary": _sentence(rng, 5), "leafUuid": parent})
        )
        (project / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if plant:
            sub = project / sid / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            text = _paragraph(rng, 2) + f" {marks['sidechain']}"
            sub_line = {**common, "isSidechain": True, "agentId": "abc1234", "parentUuid": None,
                        "type": "assistant", "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                        "timestamp": _ts(t, 1.0),
                        "message": {"id": "msg_sub", "type": "message", "role": "assistant",
                                    "model": "claude-haiku-4-5",
                                    "content": [{"type": "text", "text": text}]}}  # fmt: skip
            (sub / "agent-abc1234.jsonl").write_text(json.dumps(sub_line) + "\n", encoding="utf-8")
            planted.append(Planted(marks["sidechain"], "sidechain", sid))
    return planted
