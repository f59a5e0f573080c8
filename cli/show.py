"""``clawback show``: one whole session, as markdown or JSON."""

from __future__ import annotations

import click
from clawback.cli.home import open_home
from clawback.cli.output import print_json
from clawback.cli.sessions import usage_json
from clawback.core.archive import export_markdown, resolve_session, session_messages
from clawback.core.records import Source


@click.command()
@click.argument("session")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown")
@click.pass_context
def show(ctx: click.Context, session: str, fmt: str) -> None:
    """Print a whole session (markdown export, or JSON)."""
    home = open_home(ctx)
    if fmt == "markdown":
        click.echo(export_markdown(home.db, session), nl=False)
        return
    found = resolve_session(home.db, session)
    shown = found.to_json()
    transcript = home.paths.sessions / f"{found.id}.jsonl"
    if found.source == Source.NATIVE.value and transcript.is_file():
        from clawback.core.chat.spend import SessionSpend  # a chat's tokens, from its transcript

        shown["usage"] = SessionSpend.of_transcript(transcript).to_json()
    else:  # what the archive counted (as `clawback usage` does)
        shown["usage"] = usage_json(home, [found.id]).get(found.id)
    print_json(
        {"session": shown, "messages": [m.to_json() for m in session_messages(home.db, found.id)]}
    )
