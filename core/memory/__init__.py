"""The memory lifecycle: memory files and Claude Code's auto memory, the flush before a
compaction, compaction and its ledger, knowledge facts, extraction and the librarian.

This is the room's door: other rooms import from here, never from the modules behind it (an
import-linter contract holds it). Names load on first use, so importing the door costs nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.memory.auto_memory import (
        ProjectMemory,
        auto_memory_roots,
        auto_memory_title,
        list_auto_memory,
        locate,
        with_working_folders,
    )
    from clawback.core.memory.compaction import (
        CompactionProposal,
        CompactionRecord,
        Compactor,
        NothingToCompact,
        compacted_messages,
        describe_changes,
        extract_compacted_facts,
        list_compactions,
    )
    from clawback.core.memory.facts import (
        FACT_TYPES,
        Fact,
        FactChange,
        FactStore,
        NewFact,
        facts_for_recall,
        facts_provider,
    )
    from clawback.core.memory.files import (
        MAX_BYTES,
        MAX_LINES,
        MEMORY_FILE,
        MemoryFile,
        Workspace,
        broken_links,
    )
    from clawback.core.memory.flush import FlushPolicy, FlushProposal, MemoryFlush
    from clawback.core.memory.librarian import ConversationOutcome, Librarian
    from clawback.core.memory.lifecycle import CompactionPolicy, MemoryLifecycleHooks

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "ProjectMemory": "auto_memory",
    "auto_memory_roots": "auto_memory",
    "auto_memory_title": "auto_memory",
    "list_auto_memory": "auto_memory",
    "locate": "auto_memory",
    "with_working_folders": "auto_memory",
    "CompactionProposal": "compaction",
    "CompactionRecord": "compaction",
    "Compactor": "compaction",
    "NothingToCompact": "compaction",
    "compacted_messages": "compaction",
    "describe_changes": "compaction",
    "extract_compacted_facts": "compaction",
    "list_compactions": "compaction",
    "FACT_TYPES": "facts",
    "Fact": "facts",
    "FactChange": "facts",
    "FactStore": "facts",
    "NewFact": "facts",
    "facts_for_recall": "facts",
    "facts_provider": "facts",
    "MAX_BYTES": "files",
    "MAX_LINES": "files",
    "MEMORY_FILE": "files",
    "MemoryFile": "files",
    "Workspace": "files",
    "broken_links": "files",
    "FlushPolicy": "flush",
    "FlushProposal": "flush",
    "MemoryFlush": "flush",
    "ConversationOutcome": "librarian",
    "Librarian": "librarian",
    "CompactionPolicy": "lifecycle",
    "MemoryLifecycleHooks": "lifecycle",
}

__all__ = [
    "FACT_TYPES",
    "MAX_BYTES",
    "MAX_LINES",
    "MEMORY_FILE",
    "CompactionPolicy",
    "CompactionProposal",
    "CompactionRecord",
    "Compactor",
    "ConversationOutcome",
    "Fact",
    "FactChange",
    "FactStore",
    "FlushPolicy",
    "FlushProposal",
    "Librarian",
    "MemoryFile",
    "MemoryFlush",
    "MemoryLifecycleHooks",
    "NewFact",
    "NothingToCompact",
    "ProjectMemory",
    "Workspace",
    "auto_memory_roots",
    "auto_memory_title",
    "broken_links",
    "compacted_messages",
    "describe_changes",
    "extract_compacted_facts",
    "facts_for_recall",
    "facts_provider",
    "list_auto_memory",
    "list_compactions",
    "locate",
    "with_working_folders",
]

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
