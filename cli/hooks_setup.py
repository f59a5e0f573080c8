"""``clawback hooks install|uninstall|status``: connect clawback to Claude Code's lifecycle.

``install`` merges clawback's hook entries into a Claude Code settings file (user, project or
local scope), keeping everything else in it, with a backup beside it; ``--with-mcp`` also
registers the memory server (always loaded), so one command connects both. ``uninstall``
removes only clawback's entries. ``status`` shows what is installed where and how each hook
last ran. The rules live in :mod:`clawback.core.hooks`; what the entries run is
``clawback hook <event>`` (:mod:`clawback.cli.hook_events`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from clawback.cli.home import home_option
from clawback.cli.output import error_line, note, print_json
from clawback.core.config import load_config
from clawback.core.hooks import settings as cc_settings
from clawback.core.hooks.plugin import refuse_beside_the_plugin
from clawback.core.hooks.status import hooks_status
from clawback.core.paths import Paths
from clawback.core.spawning import clawback_command
from clawback.core.warm import stop as stop_warm_process

SCOPE_HELP = "user: every project; project: this folder, shared; local: this folder, just you."


@click.group(name="hooks")
def hooks() -> None:
    """Connect clawback to Claude Code: a brief at session start, recall on every prompt,
    notes before each compaction, every session indexed when it stops."""


def _paths(ctx: click.Context) -> Paths:
    return Paths.resolve(home_option(ctx))


def _record(paths: Paths) -> Path:
    """Where this home remembers what each install created whole (for a faithful uninstall)."""
    return paths.hooks / cc_settings.CREATED_RECORD


@hooks.command()
@click.option("--scope", type=click.Choice(cc_settings.SETTINGS_SCOPES), default="user",
              show_default=True, help=SCOPE_HELP)  # fmt: skip
@click.option(
    "--with-mcp", is_flag=True, help="Also register the memory server (memory_search, memory_get)."
)
@click.pass_context
def install(ctx: click.Context, scope: str, with_mcp: bool) -> None:
    """Add clawback's hooks to Claude Code's settings (everything else in the file is kept)."""
    refuse_beside_the_plugin(Path.cwd())
    paths = _paths(ctx).ensure()
    load_config(paths.config)  # a broken config is named now, not silently in every hook
    command = clawback_command()
    commands = {
        event: cc_settings.hook_command(command, paths.home, event) for event in cc_settings.EVENTS
    }
    path = cc_settings.settings_path(scope, cwd=Path.cwd())
    written = cc_settings.install(path, commands, record=_record(paths))
    if written.changed:
        click.echo(f"Installed clawback's hooks in {path} ({scope} scope):")
        click.echo("  " + ", ".join(cc_settings.EVENTS))
        if written.backup:
            note(f"The previous file is kept as {written.backup}.")
    else:
        click.echo(f"clawback's hooks are already installed in {path}; nothing changed.")
    if with_mcp:
        from clawback.cli.mcp import register_server

        register_server(ctx, scope)
    note("`clawback hooks status` shows how they run; CLAWBACK_HOOKS=0 switches them off.")


@hooks.command()
@click.option("--scope", type=click.Choice(cc_settings.SETTINGS_SCOPES),
              help="Only this scope (default: every scope where they are).")  # fmt: skip
@click.option("--with-mcp", is_flag=True, help="Also remove the memory server's registration.")
@click.pass_context
def uninstall(ctx: click.Context, scope: str | None, with_mcp: bool) -> None:
    """Remove clawback's hooks from Claude Code's settings (and nothing else)."""
    removed, refused = [], []
    for each in [scope] if scope else list(cc_settings.SETTINGS_SCOPES):
        path = cc_settings.settings_path(each, cwd=Path.cwd())
        try:
            written = cc_settings.uninstall(path, record=_record(_paths(ctx)))
        except cc_settings.SettingsError as exc:
            if scope:
                raise
            refused.append(str(exc))  # one broken file does not keep the others' entries
            continue
        if written.changed:
            removed.append(path)
            click.echo(f"Removed clawback's hooks from {path} ({each} scope).")
            if written.backup:
                note(f"The previous file is kept as {written.backup}.")
    for reason in refused:
        error_line(reason)
    if not removed and not refused:
        click.echo(
            "No clawback hooks were installed" + (f" in the {scope} scope." if scope else ".")
        )
    if stop_warm_process(_paths(ctx)):
        click.echo("Stopped the warm process (the model and vectors kept for recall and search).")
    if with_mcp:
        from clawback.cli.mcp import unregister_server

        unregister_server(ctx, scope)
    if refused:
        raise SystemExit(1)


def _run_line(event: str, run: dict[str, Any] | None) -> str:
    if run is None:
        return f"  {event:14} never ran"
    chars = f"{run['chars']:,} chars" if run["chars"] else ""
    parts = [
        run["at"].replace("T", " ").rstrip("Z"),
        f"{run['ms']:.0f} ms",
        run["outcome"],
        chars,
        run["detail"],
    ]
    return f"  {event:14} " + "  ".join(part for part in parts if part)


def _plugin_line(plugin: dict[str, Any], report: dict[str, Any]) -> str:
    """The plugin, and what runs when it sits beside settings-file hooks or a registration."""
    version = f" {plugin['version']}" if plugin["version"] else ""
    line = f"Plugin: {plugin['id']}{version} ({plugin['scope']} scope) "
    if not plugin["enabled"]:
        return line + "installed, switched off"
    line += "on: the hooks and the memory server"
    if any(row["events"] for row in report["scopes"]):
        line += "; its hooks step aside where settings-file hooks run (`clawback hooks uninstall`"
        line += " leaves them to the plugin)"
    if report["mcp"]:
        line += "; the memory tools are offered twice (`clawback mcp uninstall` leaves them to it)"
    return line


@hooks.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """What is installed where, and how each hook last ran."""
    paths = _paths(ctx)
    config = load_config(paths.config)
    report = hooks_status(paths, cwd=Path.cwd(), exclude=config.hooks.exclude)
    if as_json:
        print_json(report)
        return
    click.echo(f"Claude Code hooks for the clawback home {report['home']}:")
    for row in report["scopes"]:
        if row["error"]:
            shown = f"cannot read: {row['error']}"
        elif row["events"]:
            other = "" if row["this_home"] else " (another clawback home)"
            shown = f"{len(row['events'])} of {len(cc_settings.EVENTS)} events{other}"
        else:
            shown = "not installed"
        click.echo(f"  {row['scope']:8} {row['path']}: {shown}")
    plugin = report["plugin"]
    registered = ", ".join(
        f"{m['scope']} scope" + (", always loaded" if m["always_load"] else ", deferred")
        for m in report["mcp"]
    )
    hint = "from the plugin" if plugin and plugin["enabled"] else "not registered"
    click.echo(f"  MCP server: {registered or hint + ' (clawback hooks install --with-mcp)'}")
    if plugin:
        click.echo("  " + _plugin_line(plugin, report))
    minutes = config.hooks.warm_minutes
    if minutes <= 0:
        warm = "off (hooks.warm_minutes = 0)"
    else:
        from clawback.core.warm import status as warm_status
        from clawback.core.warm import summary

        said = warm_status(paths) if report["warm_process"] else None
        warm = f"running: {summary(said)}" if said else "not running"
        warm += f" (stays {minutes} min after the last question)"
    click.echo(f"  Warm process (model and vectors for recall and search): {warm}")
    if report["switched_off"]:
        click.echo("  Switched off: CLAWBACK_HOOKS=0 in this environment.")
    if report["exclude"]:
        click.echo(f"  Left alone (hooks.exclude): {', '.join(report['exclude'])}")
    click.echo("Last runs:")
    for event in cc_settings.EVENTS.values():
        click.echo(_run_line(event, report["last_runs"].get(event)))
    if report["failures"]:
        click.echo("Recent failures (the session went on; nothing was printed):")
        for run in report["failures"]:
            click.echo(_run_line(run["event"], run))
