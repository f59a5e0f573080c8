"""``clawback config``: every setting, its value, default and what it does."""

from __future__ import annotations

import click
from clawback.cli.home import open_home
from clawback.cli.output import escape, out, print_json

#: settings whose value ``clawback config`` never prints
SECRET_SETTINGS = frozenset({"telegram.token"})


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show every setting: its value, default and what it does."""
    from clawback.core.config import describe

    home = open_home(ctx)
    values = home.config.to_dict()
    rows = []
    for dotted, default, doc in describe():
        section, key = dotted.split(".")
        value = values[section][key]
        if dotted in SECRET_SETTINGS and value:
            value = "(set, not shown)"
        rows.append({"key": dotted, "value": value, "default": default, "doc": doc})
    if as_json:
        print_json(rows)
        return
    out.print(f"[dim]{home.paths.config}[/]")
    for row in rows:
        changed = "" if row["value"] == row["default"] else " [yellow](changed)[/]"
        out.print(
            f"[bold]{row['key']}[/] = {escape(repr(row['value']))}{changed}  [dim]{row['doc']}[/]"
        )
