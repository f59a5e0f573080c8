"""``clawback mcp``: the memory server for Claude, and its registration with Claude Code.

``clawback mcp`` serves MCP on stdin/stdout (what a client starts); ``clawback mcp install
[--scope user|project|local]`` and ``clawback mcp uninstall`` register it through the user's own
``claude mcp add`` / ``remove``; ``clawback mcp config`` prints the JSON block other clients take.

Serving must start fast (Claude Code waits for its servers before the first request): the
stdio front answers the handshake while the index opens and the MCP SDK loads
(:mod:`clawback.cli.mcp_serve`); the console script takes the exact command clients run
(``clawback mcp``, ``clawback --home H mcp``) straight there, without click
(:mod:`clawback.cli.entry`). stdout belongs to the protocol: nothing here prints while serving.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import click
from clawback.cli.home import home_option
from clawback.cli.output import note
from clawback.core.claude import (
    MCP_SCOPES,
    SERVER_KEY,
    add_argv,
    config_block,
    registration,
    remove_argv,
)
from clawback.core.errors import ClawbackError
from clawback.core.paths import Paths

CLAUDE_TIMEOUT = 120.0  # `claude mcp add` is quick; `get` starts the server to check it


@click.group(name="mcp", invoke_without_command=True)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve the memory over MCP (stdio), or register it with Claude Code (install)."""
    if ctx.invoked_subcommand is not None:
        return
    from clawback.cli.mcp_serve import serve_mcp

    serve_mcp(home_option(ctx))


def _home(ctx: click.Context) -> Path:
    return Paths.resolve(home_option(ctx)).ensure().home


def _claude(ctx: click.Context) -> str:
    """The user's ``claude`` (``chat.claude_command``, ``$CLAWBACK_CLAUDE``), as a full path."""
    from clawback.core.claude import ClaudeRunner
    from clawback.core.config import load_config

    paths = Paths.resolve(home_option(ctx))
    return ClaudeRunner.from_config(load_config(paths.config).chat).executable()


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=CLAUDE_TIMEOUT, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ClawbackError(
            f"`{' '.join(argv[:3])}` did not finish in {CLAUDE_TIMEOUT:.0f} s."
        ) from None
    except OSError as exc:
        raise ClawbackError(f"could not run {argv[0]}: {exc.strerror or exc}") from None


def _said(proc: subprocess.CompletedProcess[str]) -> str:
    return " ".join((proc.stderr.strip() or proc.stdout.strip()).split())


@mcp.command()
@click.option(
    "--scope",
    type=click.Choice(MCP_SCOPES),
    default="user",
    show_default=True,
    help="user: every project; project: this folder's .mcp.json; local: this folder, just you.",
)
@click.pass_context
def install(ctx: click.Context, scope: str) -> None:
    """Register `clawback mcp` with Claude Code (through your `claude mcp add-json`)."""
    register_server(ctx, scope)


def register_server(ctx: click.Context, scope: str) -> None:
    """Register the server for ``scope`` (always loaded), replacing an older registration."""
    from clawback.core.hooks.plugin import refuse_beside_the_plugin

    refuse_beside_the_plugin(Path.cwd())
    home, claude = _home(ctx), _claude(ctx)
    argv = add_argv(claude, home, scope)
    added = _run(argv)
    if added.returncode != 0 and "already exists" in _said(added):
        _run(remove_argv(claude, scope))  # re-installing updates the registration in place
        added = _run(argv)
    if added.returncode != 0:
        raise ClawbackError(f"claude mcp add-json failed: {_said(added) or added.returncode}")
    click.echo(f"Registered '{SERVER_KEY}' with Claude Code ({scope} scope) on {home}:")
    entry = registration(home)
    click.echo("  " + " ".join([entry["command"], *entry["args"]]) + " (always loaded)")
    checked = _run([claude, "mcp", "get", SERVER_KEY])
    status = next((ln.strip() for ln in checked.stdout.splitlines() if "Status:" in ln), "")
    if status:
        click.echo(f"  {status}")
    if scope != "user":
        note(f"Registered for {os.getcwd()} only; Claude Code asks before using a project server.")
    note("Claude Code can now call memory_search and memory_get; `claude mcp list` shows it.")


@mcp.command()
@click.option("--scope", type=click.Choice(MCP_SCOPES), help="Only from this scope.")
@click.pass_context
def uninstall(ctx: click.Context, scope: str | None) -> None:
    """Remove the registration `clawback mcp install` made."""
    unregister_server(ctx, scope)


def unregister_server(ctx: click.Context, scope: str | None) -> None:
    removed = _run(remove_argv(_claude(ctx), scope))
    if removed.returncode != 0:
        raise ClawbackError(f"claude mcp remove failed: {_said(removed) or removed.returncode}")
    click.echo(f"Removed '{SERVER_KEY}' from Claude Code.")


@mcp.command()
@click.pass_context
def config(ctx: click.Context) -> None:
    """Print the JSON for --mcp-config, .mcp.json, Claude Desktop or Cursor."""
    click.echo(json.dumps(config_block(_home(ctx)), indent=2))
