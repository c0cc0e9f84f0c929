"""HOOK for the paired comparison of runs (branch ``compare-runs``; issue 34 item 4).

When several runs of one kind carry units (the same items or datums, so that their
scores pair up), the report is to show the paired comparison table and its forest plot:
per metric, the difference between each run and the baseline with its paired interval and
p-value, as ``assay compare`` computes it in :mod:`assay.compare`. That computation (and the
store's run names and tags) belongs to the compare-runs branch; this module is the one place
the report asks for it, so that branch fills :func:`paired_section` and nothing else in the
report changes.

Today it returns no HTML: the page shows the unpaired side-by-side table (values,
differences highlighted, interval overlap) and the parameters diff, which need no units.

Example:
    >>> paired_section([])
    ''
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.store.records import Evaluation

__all__ = ["paired_section"]


def paired_section(runs: Sequence[Evaluation]) -> str:
    """The HTML of the paired comparison of ``runs`` (the first is the baseline), or ``""``
    while no paired statistics are wired in (see the module docstring)."""
    return ""
