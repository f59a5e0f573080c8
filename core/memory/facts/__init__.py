"""Knowledge facts: the rules that decide what a new fact does, and the store that keeps them."""

from clawback.core.memory.facts.store import *  # noqa: F403
from clawback.core.memory.facts.store import __all__  # noqa: F401
