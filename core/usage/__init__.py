"""What sessions cost: usage kept per model response, priced with a dated table.

The write side (:mod:`.index`) keeps the ``usage`` and ``usage_buckets`` tables in step with
the lines the ingest reads; :mod:`.prices` holds what tokens cost; :mod:`.report` reads the
sums back for every client. See ``docs/usage.md``.
"""

from clawback.core.usage.prices import PriceTable, Tokens, load_prices, model_family
from clawback.core.usage.report import (
    GROUPINGS,
    UsageReport,
    UsageRow,
    UsageTotals,
    cost_text,
    models,
    projects,
    session_usage,
    usage_report,
)

__all__ = [
    "GROUPINGS",
    "PriceTable",
    "Tokens",
    "UsageReport",
    "UsageRow",
    "UsageTotals",
    "cost_text",
    "load_prices",
    "model_family",
    "models",
    "projects",
    "session_usage",
    "usage_report",
]
