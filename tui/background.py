"""App-wide background work: live updates, the first-run offer to ingest, a full ingest, saving
settings, and the one place where any worker's failure becomes a notification.

Each job runs in a thread worker owned by the app, so the UI stays usable while it runs and a
failure reaches :func:`report_failure`. Kept out of ``app.py`` so that stays wiring.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from clawback.core.errors import ClawbackError
from clawback.core.gateway.status import read_status
from clawback.core.warm import status as warm_status
from clawback.core.warm import summary as warm_summary
from textual.dom import DOMNode
from textual.worker import Worker

from .screens.dialogs import ChoiceScreen
from .watcher import ArchiveChanged, ChangeBatch, watch_archive
from .widgets.ingest_progress import IngestProgress

if TYPE_CHECKING:
    from .app import ClawbackApp
    from .store import Store

GATEWAY_CHECK_S = 30.0


def start(app: ClawbackApp) -> None:
    if app.live_updates:
        app.run_worker(
            partial(_watch, app),
            name="live updates",
            group="watcher",
            thread=True,
            exit_on_error=False,
        )
    app.run_worker(
        partial(_first_run, app), name="first-run check", thread=True, exit_on_error=False
    )
    check_gateway(app)
    app.set_interval(GATEWAY_CHECK_S, partial(check_gateway, app))


def check_gateway(app: ClawbackApp) -> None:
    """Say in the title whether a Telegram gateway runs for this home, and the warm process
    with what it holds (a file, two locks and the warm process's own word, read in a thread,
    every :data:`GATEWAY_CHECK_S`)."""
    app.run_worker(
        partial(_gateway_title, app),
        name="gateway status",
        group="gateway",
        thread=True,
        exclusive=True,
        exit_on_error=False,
    )


def _gateway_title(app: ClawbackApp) -> None:
    status = read_status(app.store.paths.gateway, "telegram")
    parts = [app.TITLE]
    if status.running:
        parts.append(status.summary())
    warm = warm_status(app.store.paths)
    if warm is not None:
        parts.append(f"warm process: {warm_summary(warm)}")
    title = " · ".join(parts)
    if app.title != title:
        app.call_from_thread(setattr, app, "title", title)


def _watch(app: ClawbackApp) -> None:
    def batch_done(batch: ChangeBatch) -> None:
        app.post_message(ArchiveChanged(batch))  # thread-safe

    watch_archive(app.store, on_batch=batch_done, stop_event=app.stop_watching, ready=app.watching)


def _first_run(app: ClawbackApp) -> None:
    """An empty archive: say where transcripts would come from, and if there are some on the
    machine, offer to index them."""
    if app.store.count_sessions() > 0:
        return
    folders = app.store.source_folders()
    app.call_from_thread(app.panes.sessions.show_first_run, folders)
    found = [(name, path) for name, path, count in folders if count]
    if found:
        app.call_from_thread(_offer, app, found)


def _offer(app: ClawbackApp, found: list[tuple[str, object]]) -> None:
    detail = "\n".join(f"• {name}: {path}" for name, path in found)

    def answered(choice: str | None) -> None:
        if choice == "ingest":
            ingest(app)

    app.push_screen(
        ChoiceScreen(
            "No sessions are indexed yet. Index the ones found on this machine?",
            [("ingest", "Index now"), ("later", "Not now")],
            detail=f"{detail}\n\nThe app stays usable while it runs.",
            cancel="later",
        ),
        answered,
    )


def ingest(app: ClawbackApp) -> None:
    """Index every configured source now, with progress under the session list."""
    progress = app.query_one(IngestProgress)
    app.run_worker(
        partial(_ingest, app, progress),
        name="ingest",
        group="ingest",
        thread=True,
        exclusive=True,
        exit_on_error=False,
    )


def _ingest(app: ClawbackApp, progress: IngestProgress) -> None:
    def started(files: int, total_bytes: int) -> Callable[[int], None]:
        app.call_from_thread(progress.start, files, total_bytes)
        return lambda done: app.call_from_thread(progress.advance, done)

    try:
        stats = app.store.ingest_all(progress=started)
    finally:
        app.call_from_thread(progress.finish)
    app.post_message(ArchiveChanged(ChangeBatch(errors=tuple(stats.errors))))
    app.call_from_thread(
        app.notify,
        f"Indexed {stats.files:,} files ({stats.entries:,} entries) in {stats.seconds:.1f} s.",
        title="Ingest",
    )


def save_settings(
    owner: DOMNode, store: Store, what: str, changes: Callable[[], dict[str, Any]]
) -> None:
    """Persist settings the user changed (see :meth:`Store.save_settings`) without blocking.

    The worker belongs to ``owner`` so that a failure (a broken ``config.toml``) reaches
    :func:`report_failure` the way every other worker's does.
    """
    owner.run_worker(
        partial(store.save_settings, changes),
        name=f"saving {what}",
        group="settings",
        thread=True,
        exit_on_error=False,
    )


def report_failure(app: ClawbackApp, worker: Worker[Any]) -> None:
    """A background failure as a notification with the real reason (harlequin-style)."""
    error = worker.error
    reason = str(error)
    if not isinstance(error, ClawbackError):  # a bug rather than a user's mistake: name its type
        reason = f"{type(error).__name__}: {error}"
    app.log.error(f"worker {worker.name!r} failed", error)
    words = worker.name.strip("_").split("_")
    if len(words) > 1 and words[0] in ("run", "do", "load", "fetch", "show"):
        words = words[1:]  # "_run_flush" reads "Flush failed", not "run flush failed"
    title = f"{' '.join(words).capitalize()} failed"
    app.notify(reason, title=title, severity="error", timeout=8, markup=False)
