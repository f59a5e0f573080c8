"""What every latency bench reports of its samples: the median and the 95th percentile."""

from __future__ import annotations

import statistics


def percentiles(samples: list[float]) -> tuple[float, float]:
    """``(p50, p95)`` in milliseconds of ``samples`` in seconds (p95: the nearest rank)."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000
