"""The home a command works on: opened once per invocation and closed when the command ends."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import click
from clawback.core.paths import Paths

if TYPE_CHECKING:  # opening a whole home imports every service: only commands that need it pay
    from clawback.core.chat.engine import ChatEngine
    from clawback.core.chat.sessions import ChatSession
    from clawback.core.home import Home


def home_option(ctx: click.Context) -> Path | None:
    """``--home`` (or ``$CLAWBACK_HOME``) as given to the root group."""
    return ctx.find_root().params.get("home")


def open_home(ctx: click.Context, *, set_aside_damaged: bool = False) -> Home:
    """The home for this invocation (tests may hand one in as the root context's ``obj``);
    ``set_aside_damaged``: a damaged index is replaced (``reindex``), not an error."""
    from clawback.core.home import Home

    root = ctx.find_root()
    if isinstance(root.obj, Home):
        return root.obj
    home = Home.open(home_option(ctx), set_aside_damaged=set_aside_damaged)
    root.obj = home
    ctx.call_on_close(home.close)
    return home


def open_index(ctx: click.Context) -> sqlite3.Connection:
    """A read-only connection to the index, without the cost of opening the whole home.

    Searches take this path: it skips config parsing, migrations and the services a home
    builds. When the index is missing or needs migrating, the full open does that first.
    """
    from clawback.core.db import connect_reader

    root = ctx.find_root()
    if root.obj is not None:  # a home handed in (tests) or already open
        return open_home(ctx).db.conn
    paths = Paths.resolve(home_option(ctx))
    conn = connect_reader(paths.database)
    if conn is None:
        return open_home(ctx).db.conn
    ctx.call_on_close(conn.close)
    return conn


def chat_session(engine: ChatEngine, ref: str) -> ChatSession:
    """The chat session ``ref`` names (``flush``, ``compact``, ``compactions``): a key (its
    current session), an id or an id prefix."""
    from clawback.core.errors import NotFoundError

    ref = ref.strip()
    if ":" in ref:
        found = engine.store.current(ref)
        if found is None:
            raise NotFoundError(f"no chat session for key {ref!r} (see `clawback sessions`)")
        return found
    found = engine.store.find(ref)
    if found is None:
        raise NotFoundError(
            f"no clawback chat session {ref!r}: flush and compaction work on sessions of"
            " `clawback chat` (see `clawback sessions --source native`)"
        )
    return found
