"""What an ingest run reports: counts, timings and every file it did not read, with why.

``ingest --json``, ``health`` and the app's progress all read these; the JSON shape of
:meth:`IngestStats.to_dict` is a contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Progress = Callable[[int], None]  # called with bytes consumed since the last call
# Given (files to read, bytes to read), returns the Progress callback for this run.
ProgressFactory = Callable[[int, int], Progress]


@dataclass
class IngestStats:
    files: int = 0  # files read (new, grown or re-imported)
    unchanged: int = 0
    reimported: int = 0
    entries: int = 0
    skipped_lines: int = 0
    unsupported_files: int = 0
    empty_files: int = 0  # nothing to read yet (Claude Code creates files before writing)
    missing: int = 0
    bytes: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    # (path, why) for every file not read: unknown format, unreadable, a bad name, a failure
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    # Of those, the ones an earlier scan had already named for the same reason: a report says
    # what is new, not the same lines on every run.
    known_skips: set[tuple[str, str]] = field(default_factory=set)

    def summary(self) -> str:
        """The one line ``clawback ingest`` prints."""
        mb = self.bytes / 1_048_576
        counts = [
            f"{self.unchanged} unchanged",
            f"{self.skipped_lines} lines skipped",
            *([f"{self.empty_files} empty files"] if self.empty_files else []),
            *([f"{self.missing} source files missing"] if self.missing else []),
            *(
                [f"{self.unsupported_files} files in unknown formats"]
                if self.unsupported_files
                else []
            ),
        ]
        return (
            f"Ingested {self.files} files ({mb:.1f} MB, {self.entries} entries) in "
            f"{self.seconds:.2f}s; " + ", ".join(counts)
        )

    def known_skips_note(self) -> str:
        """What stands for the files named on an earlier run (each is named once, when new)."""
        return f"{len(self.known_skips)} files not read, as before (`clawback health` names them)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "unchanged": self.unchanged,
            "reimported": self.reimported,
            "entries": self.entries,
            "skipped_lines": self.skipped_lines,
            "unsupported_files": self.unsupported_files,
            "empty_files": self.empty_files,
            "missing": self.missing,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "errors": self.errors,
            "skipped_files": [{"path": p, "reason": r} for p, r in self.skipped_files],
        }
