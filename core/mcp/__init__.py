"""clawback's MCP server: the memory tools (``memory_search``, ``memory_get``) for Claude.

:mod:`.tools` answers, :mod:`.refs` names what it answers about, :mod:`.answers` keeps answers
bounded; :mod:`.server` alone imports the MCP SDK. How a client starts the server (the command,
the JSON block, the chat turns' flags) is :mod:`clawback.core.claude.mcp`, below the chat layer.
"""
