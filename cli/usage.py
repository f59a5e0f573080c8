"""``clawback usage``: what sessions cost, per day, week, month, project, session or model.

It reads the index through a plain connection and prints with click alone, so a report over a
large archive starts as fast as a search (``bench/usage.py``). The figures come from
:func:`clawback.core.usage.usage_report`, as the app's usage pane's do.
"""

from __future__ import annotations

import sys

import click
from clawback.cli.home import home_option, open_index
from clawback.cli.output import print_json
from clawback.core.archive import project_name, unique_prefixes
from clawback.core.config import load_config
from clawback.core.db import Queryable
from clawback.core.errors import UsageError
from clawback.core.paths import Paths
from clawback.core.usage import (
    GROUPINGS,
    UsageReport,
    UsageRow,
    UsageTotals,
    cost_text,
    load_prices,
)
from clawback.core.usage.report import PERIODS, usage_report

_HEADINGS = {
    "day": "Day",
    "week": "Week of",
    "month": "Month",
    "project": "Project",
    "session": "Session",
    "model": "Model",
}


@click.command(name="usage")
@click.option("--by", type=click.Choice(GROUPINGS), default="day", show_default=True)
@click.option("--since", help="From this local date on (YYYY-MM-DD), inclusive.")
@click.option("--until", help="Up to this local date (YYYY-MM-DD), inclusive.")
@click.option("--project", help="Only sessions whose working directory contains this.")
@click.option("--model", help="Only this model.")
@click.option("--limit", "-n", type=click.IntRange(1), help="At most this many rows.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array, one object per row.")
@click.pass_context
def usage(
    ctx: click.Context,
    by: str,
    since: str | None,
    until: str | None,
    project: str | None,
    model: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """Tokens and cost of every session: input, output, cache reads and writes.

    Each API response counts once; days are your local days; a model with no known price
    shows its tokens and "unknown" for its cost (add prices under [usage] in config.toml).
    """
    prices = load_prices(load_config(Paths.resolve(home_option(ctx)).config).usage.prices)
    db = open_index(ctx)
    try:
        report = usage_report(
            db, prices, by=by, since=since, until=until, project=project, model=model,
            limit=limit,
        )  # fmt: skip
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if as_json:
        print_json([row.to_json(by) for row in report.rows])
        return
    if not report.rows:
        narrowed = since or until or project or model
        click.echo("No usage matches." if narrowed else "No usage recorded yet.", err=True)
        return
    _print(report, _labels(db, report))


def _labels(db: Queryable, report: UsageReport) -> list[str]:
    """What names each row: a period, a project's folder, a session's id prefix and title."""
    by = report.by
    if by in PERIODS:
        return [row.key or "(no date)" for row in report.rows]
    if by == "project":
        return [project_name(row.key) if row.key else "(no project)" for row in report.rows]
    if by == "model":
        return [row.key or "(no model)" for row in report.rows]
    prefixes = unique_prefixes(db, [row.key for row in report.rows])
    return [
        f"{prefix}  {_cut(' '.join((row.title or '').split()), 48)}".rstrip()
        for prefix, row in zip(prefixes, report.rows, strict=True)
    ]


def _print(report: UsageReport, labels: list[str]) -> None:
    head = (_HEADINGS[report.by], "Input", "Output", "Cache read", "Cache write", "Cached", "Cost")
    lines = [_cells(label, row) for label, row in zip(labels, report.rows, strict=True)]
    total = _cells("Total", report.total)
    widths = [max(len(cells[i]) for cells in (head, *lines, total)) for i in range(len(head))]

    def show(cells: tuple[str, ...], bold: bool = False) -> None:
        first = cells[0].ljust(widths[0])
        rest = "  ".join(
            cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)
        )
        click.secho(f"{first}  {rest}", bold=bold)

    show(head, bold=True)
    for cells in lines:
        show(cells)
    if len(lines) > 1:
        show(total, bold=True)
    unknown = sorted(report.total.unpriced_models)
    if unknown:
        sys.stdout.flush()  # the note after the table, where both go to one terminal
        click.echo(
            f"? cost unknown for {', '.join(unknown)}: no price in clawback's table "
            "(add one under [usage] prices in config.toml)",
            err=True,
        )


def _cells(label: str, row: UsageRow | UsageTotals) -> tuple[str, ...]:
    share = row.cache_read_share
    return (
        label,
        f"{row.input_tokens:,}",
        f"{row.output_tokens:,}",
        f"{row.cache_read_tokens:,}",
        f"{row.cache_write_tokens:,}",
        "-" if share is None else f"{share:.0%}",
        cost_text(row),
    )


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
