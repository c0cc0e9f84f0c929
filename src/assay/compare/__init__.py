"""Decisions between runs on the same units: paired tests, adjusted p-values and power.

Pure functions, arrays (or the engine's tallies) in; the store's ``compare`` pairs stored
runs and calls them. The difference is always the second run minus the first (the
baseline), so swapping the runs negates it and keeps every p-value.

:mod:`~assay.compare.paired`
    the closed-form paired tests: exact McNemar for right/wrong units, paired t for
    per-unit scores, DeLong's test for two correlated ROC AUCs;
:mod:`~assay.compare.bootstrap`
    the paired bootstrap of two tallies under one set of resample weights (the interval
    of the difference of any record, and a p-value from its bootstrap distribution);
:mod:`~assay.compare.adjust`
    Holm's and Benjamini-Hochberg's adjustment over the runs compared;
:mod:`~assay.compare.power`
    the minimum detectable difference, the units needed to detect a difference, and the
    units needed for an interval of a given width.

Example:
    >>> r = paired_t([0.2, 0.4, 0.5, 0.9], [0.3, 0.6, 0.5, 1.0])
    >>> r.test, round(r.diff, 3), round(r.p_value, 4)
    ('paired_t', 0.1, 0.0917)
"""

from assay.compare.adjust import ADJUST_METHODS, adjust
from assay.compare.bootstrap import Pairing, pair_units, paired_bootstrap
from assay.compare.paired import Paired, delong_test, mcnemar, newcombe_paired, paired_t
from assay.compare.power import mde, n_for_width, n_needed

__all__ = [
    "ADJUST_METHODS",
    "Paired",
    "Pairing",
    "adjust",
    "delong_test",
    "mcnemar",
    "mde",
    "n_for_width",
    "n_needed",
    "pair_units",
    "paired_bootstrap",
    "newcombe_paired",
    "paired_t",
]
