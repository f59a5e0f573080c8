"""The ``clawback`` console script: the click group, its lazily loaded commands, and ``main``.

Each command lives in the module named in :data:`COMMANDS` and is imported only when it runs
(or when help lists it), so ``clawback search`` never pays for the chat, memory or UI code.
:func:`main` is the one error boundary: every :class:`ClawbackError` (and the few OS and
SQLite failures a user can cause) becomes one line on stderr and a non-zero exit, never a
traceback.
"""

from __future__ import annotations

import importlib
import sqlite3
import sys
from pathlib import Path

import click
from clawback.cli.output import error_line
from clawback.core.errors import ClawbackError
from clawback.core.faults import explain
from clawback.core.paths import Paths

#: command name -> "module:attribute" under ``clawback.cli``
COMMANDS: dict[str, str] = {
    "ingest": "ingest:ingest",
    "reindex": "ingest:reindex",
    "search": "search:search_command",
    "embed": "embed:embed",
    "sessions": "sessions:sessions",
    "show": "show:show",
    "conversations": "sessions:conversations",
    "health": "health:health_command",
    "watch": "watch:watch",
    "config": "config:config",
    "chat": "chat:chat",
    "flush": "flush:flush_command",
    "compact": "compact:compact_command",
    "compactions": "compact:compactions_command",
    "process": "process:process",
    "facts": "facts:facts",
    "memory": "memory:memory",
    "mcp": "mcp:mcp",
    "hooks": "hooks_setup:hooks",
    "hook": "hook_events:hook",
    "demo": "demo:demo",
    "resume": "resume:resume",
    "restore": "restore:restore",
    "gateway": "gateway:gateway",
    "usage": "usage:usage",
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(f"clawback.cli.{module}"), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="CLAWBACK_HOME",
    help="Home folder (default ~/.clawback, or $CLAWBACK_HOME).",
)
@click.option("--demo", is_flag=True, help="Open the app on the bundled demo archive.")
@click.version_option(None, "--version", "-V", package_name="clawback", prog_name="clawback")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, demo: bool) -> None:
    """clawback: a durable, searchable memory of your Claude sessions."""
    if ctx.invoked_subcommand is not None:
        return
    from clawback.cli.app import launch_app

    if demo:
        from clawback.core.demo import demo_home

        home = demo_home(home)
    launch_app(ctx, home)


def _database(argv: list[str] | None) -> Path | None:
    """The index the command line names (``--home``, ``$CLAWBACK_HOME``, the default), so an
    SQLite failure can be explained with the folder it happened in."""
    args = sys.argv[1:] if argv is None else argv
    home: str | None = None
    for i, arg in enumerate(args):
        if arg == "--home" and i + 1 < len(args):
            home = args[i + 1]
        elif arg.startswith("--home="):
            home = arg.split("=", 1)[1]
    try:
        return Paths.resolve(home).database
    except Exception:  # explaining must never fail in its turn
        return None


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user-facing failures become one line on stderr and an exit code."""
    try:
        # Without standalone mode click returns a command's ``ctx.exit(n)`` instead of exiting.
        code = cli.main(args=argv, prog_name="clawback", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except ClawbackError as exc:
        error_line(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except sqlite3.Error as exc:  # damaged, read-only, full or locked: say which
        error_line(explain(exc, _database(argv)))
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a read-only home, a full disk: the file and the cause, one line
        error_line(explain(exc, Path(exc.filename) if exc.filename else _database(argv)))
        sys.exit(1)
