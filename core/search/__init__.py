"""Query to ranked hits: query parsing, prefixes, keyword/semantic/hybrid search, fusion."""
