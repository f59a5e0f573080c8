"""How a room's door (its ``__init__.py``) hands out its names: each loaded on first use from the
module behind the door that defines it, so importing a door costs nothing.

A door keeps a ``TYPE_CHECKING`` block importing each name for mypy, and ``_HOMES`` (name ->
module) for the runtime; ``__getattr__ = loader(__name__, _HOMES)`` is hidden from mypy, so a name
the door does not export stays an error there. Nothing is imported here: the hooks' thin client
goes through the warm room's door.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see above
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def loader(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """A door's module ``__getattr__``: ``name`` from ``package.<homes[name]>``."""

    def load(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(__import__(f"{package}.{home}", fromlist=[name]), name)

    return load
