"""``clawback health``: what the index holds and what needs a person's attention.

Counts per source, files not read, skipped lines, the embeddings' coverage, how the hooks,
the warm process and the gateway last ran, and whether `claude` is found.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from clawback.cli.home import open_home
from clawback.cli.output import escape, out, print_json

if TYPE_CHECKING:
    from clawback.core.config import EmbeddingsConfig
    from clawback.core.ingest.health import Health


@click.command(name="health")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def health_command(ctx: click.Context, as_json: bool) -> None:
    """Counts per source, stuck files, skipped lines, database size, and `claude` status."""
    from clawback.core.embeddings.coverage import vector_coverage
    from clawback.core.gateway.status import read_status
    from clawback.core.hooks.log import last_runs, recent_failures
    from clawback.core.ingest.health import health

    home = open_home(ctx)
    report = health(home.db, home.paths, home.config.chat.claude_command)
    vectors = vector_coverage(
        home.db, home.paths.vectors, tools_and_thinking=home.config.embeddings.tools_and_thinking
    )
    from clawback.core.warm import status as warm_status

    hook_runs = last_runs(home.paths.hooks)
    hook_failures = recent_failures(home.paths.hooks)
    warm = warm_status(home.paths)
    gateway = read_status(home.paths.gateway, "telegram")
    if as_json:
        embeddings = {**vectors.to_json(), "setting": home.config.embeddings.model}
        hooks = {
            "last_runs": {event: asdict(run) for event, run in hook_runs.items()},
            "failures": [asdict(run) for run in hook_failures],
            "warm_process": warm,
        }
        gateways = {"telegram": gateway.to_json()}
        print_json(
            {**report.to_json(), "embeddings": embeddings, "hooks": hooks, "gateways": gateways}
        )
        return
    _print_files(report)
    _print_skipped_lines(report)
    _print_embeddings(vectors, home.config.embeddings)
    _print_hooks(hook_runs, hook_failures)
    _print_warm(warm, home.config.hooks.warm_minutes)
    _print_gateway(gateway, home.paths.gateway / "telegram")
    _print_claude(report)


def _print_files(report: Health) -> None:
    """The database, what each source holds, and the files that need a look."""
    out.print(f"[bold]Database[/] {report.database} ({report.database_bytes / 1_048_576:.1f} MB)")
    for source, counts in sorted(report.sources.items()):
        parts = ", ".join(f"{v or 0} {k.replace('_', ' ')}" for k, v in counts.items())
        out.print(f"  [magenta]{source:12}[/] {parts}")
    if report.stuck_ingesting:
        out.print(f"[yellow]Files left mid-ingest:[/] {len(report.stuck_ingesting)}")
    if report.set_aside:
        out.print("[yellow]Set aside as damaged[/] (delete once nothing in them is needed)")
        for name in report.set_aside:
            out.print(f"  {escape(name)}")
    if report.skipped_files:
        out.print(f"[bold]Files not read[/] {len(report.skipped_files)}")
        for item in report.skipped_files:
            out.print(f"  {escape(item['path'])}: {escape(item['reason'])}")
    if report.incomplete_tails:
        out.print("[bold]Files ending in an unfinished line[/] (being written, or cut off)")
        for item in report.incomplete_tails:
            out.print(f"  {escape(item['path'])}: last {item['bytes']:,} bytes not indexed")


def _print_skipped_lines(report: Health) -> None:
    """Every reason a line was skipped, every line the report names (the first
    SKIPPED_LINES_SHOWN), and the conversations by status."""
    out.print(f"[bold]Skipped lines[/] {report.skipped_lines}")
    for reason, n in report.skipped_reasons.items():
        out.print(f"  {n:6}  {escape(reason)}")
    for item in report.skipped_line_list:
        out.print(f"  [dim]{escape(item['path'])}:{item['line']}[/] {escape(item['reason'])}")
    if report.skipped_lines > len(report.skipped_line_list):
        more = report.skipped_lines - len(report.skipped_line_list)
        out.print(f"  [dim]… and {more:,} more lines of the reasons above[/]")
    if report.conversations:
        out.print(
            "[bold]Conversations[/] "
            + ", ".join(f"{n} {status}" for status, n in sorted(report.conversations.items()))
        )


def _print_claude(report: Health) -> None:
    """Which `claude` chats and processing would run, or how to install it."""
    if report.claude_path:
        out.print(f"[bold]claude[/] {report.claude_path} ({report.claude_version or 'unknown'})")
    else:
        out.print(
            "[bold]claude[/] [yellow]not found on PATH[/]"
            " (npm install -g @anthropic-ai/claude-code)"
        )


def _print_hooks(runs: dict[str, Any], failures: list[Any]) -> None:
    """Claude Code hooks: when they last ran, and the latest failures (which printed nothing)."""
    if not runs:
        return
    latest = max(run.at for run in runs.values())
    out.print(f"[bold]Claude Code hooks[/] last ran {latest.replace('T', ' ').rstrip('Z')} UTC")
    for run in failures:
        when = run.at.replace("T", " ").rstrip("Z")
        out.print(f"  [yellow]{run.event} {run.outcome}[/] {when}: {escape(run.detail)}")


def _print_warm(said: dict[str, Any] | None, minutes: int) -> None:
    """The warm process: what it holds and how long it stays, when one runs."""
    from clawback.core.warm import summary

    if said is not None:
        pid = said.get("pid")
        out.print(f"[bold]Warm process[/] running (pid {pid}): {summary(said)}")
    elif minutes > 0:
        out.print(
            f"[bold]Warm process[/] not running (started by the hooks; stays {minutes} min idle)"
        )


def _print_gateway(status: Any, folder: Path) -> None:
    """The Telegram gateway: running or not, its last update and recent errors (once used)."""
    if not status.running and not folder.exists():
        return
    out.print(f"[bold]Gateway[/] {escape(status.summary())}")
    for error in status.errors:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(error.get("at", 0)))
        out.print(f"  [yellow]{when}[/] {escape(str(error.get('what', '')))}")


def _print_embeddings(vectors: Any, settings: EmbeddingsConfig) -> None:
    """One line: which model, how much of the archive it covers, what to run next."""
    if not settings.enabled:
        out.print("[bold]Embeddings[/] off (embeddings.model = 'none'): search is keyword-only")
        return
    model = vectors.model or settings.model
    line = (
        f"[bold]Embeddings[/] {model}: {vectors.vectors:,} of {vectors.total:,}"
        f" chunks ({100 * vectors.ratio:.0f}%)"
    )
    if vectors.ratio < 1:
        line += " [dim]- `clawback embed` covers the rest[/]"
    out.print(line)
