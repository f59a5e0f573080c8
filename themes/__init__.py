"""clawback's themes as data: TOML files that load into :class:`textual.theme.Theme`.

Themes are data, not code, so a user can drop a ``*.toml`` into ``<home>/themes`` without touching
Python. A file that cannot be read, is not valid TOML or names a colour Textual cannot parse is
reported (file and reason) and skipped; it never stops the app from starting. The app then falls
back to :data:`DEFAULT_THEME`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "clawback-dark"
BUNDLED = Path(__file__).parent
COLOR_FIELDS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "success",
    "warning",
    "error",
)
TOP_LEVEL = {"name", "dark", "colors", "variables", "luminosity_spread", "text_alpha"}


class ThemeError(ValueError):
    """A theme file that cannot become a Theme; the message names the file and the reason."""


@dataclass
class LoadedThemes:
    themes: list[Theme] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def theme_from_data(data: dict[str, Any], origin: str) -> Theme:
    """Build a Theme from a parsed TOML table, checking every key and colour."""
    unknown = set(data) - TOP_LEVEL
    if unknown:
        raise ThemeError(f"{origin}: unknown keys {', '.join(sorted(unknown))}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeError(f"{origin}: 'name' must be a non-empty string")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeError(f"{origin}: [colors] must be a table")
    unknown = set(colors) - set(COLOR_FIELDS)
    if unknown:
        raise ThemeError(f"{origin}: unknown colours {', '.join(sorted(unknown))}")
    if "primary" not in colors:
        raise ThemeError(f"{origin}: [colors] needs at least 'primary'")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ThemeError(f"{origin}: [variables] must map names to strings")
    for key, value in colors.items():
        try:
            Color.parse(value)
        except (ColorParseError, TypeError, ValueError):
            raise ThemeError(f"{origin}: colour {key} = {value!r} is not a colour") from None
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeError(f"{origin}: 'dark' must be true or false")
    options: dict[str, Any] = dict(colors)
    options.update({k: float(data[k]) for k in ("luminosity_spread", "text_alpha") if k in data})
    return Theme(name=name.strip(), dark=dark, variables=dict(variables), **options)


def load_theme(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ThemeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ThemeError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeError(f"{path}: invalid TOML: {exc}") from None
    return theme_from_data(data, str(path))


def load_themes(*folders: Path) -> LoadedThemes:
    """Every ``*.toml`` theme in ``folders`` (bundled first); later files win on a name clash."""
    loaded = LoadedThemes()
    by_name: dict[str, Theme] = {}
    for folder in (BUNDLED, *folders):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme(path)
            except ThemeError as exc:
                loaded.errors.append(str(exc))
                continue
            by_name[theme.name] = theme
    loaded.themes = list(by_name.values())
    return loaded
