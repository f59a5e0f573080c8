"""Themes in the running app: register clawback's own, apply the configured one, persist changes.

A theme that is missing or whose file is broken must never stop the app: it falls back to the
default and says why. A theme picked in the command palette is written to ``config.toml`` (in a
thread worker, as all file IO) so the next start opens with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawback.themes import DEFAULT_THEME, LoadedThemes

from . import background

if TYPE_CHECKING:
    from .app import ClawbackApp


class ThemeKeeper:
    def __init__(self, loaded: LoadedThemes, configured: str) -> None:
        self.loaded = loaded
        self.saved = configured  # the name config.toml holds (or will, once persisted)
        self.installed = False

    def install(self, app: ClawbackApp) -> None:
        """Register the loaded themes and switch to the configured one (or the default)."""
        for theme in self.loaded.themes:
            app.register_theme(theme)
        problems = list(self.loaded.errors)
        if self.saved not in app.available_themes:
            problems.append(f"Theme {self.saved!r} is unavailable.")
            self.saved = DEFAULT_THEME  # fall back without overwriting the user's setting
        app.theme = self.saved
        self.installed = True
        for problem in problems:
            app.notify(
                f"{problem} Using {app.theme}.", title="Theme", severity="warning", markup=False
            )

    def changed(self, app: ClawbackApp, name: str) -> None:
        if self.installed and name != self.saved:
            self.saved = name
            background.save_settings(app, app.store, "the theme", lambda: {"ui.theme": name})
