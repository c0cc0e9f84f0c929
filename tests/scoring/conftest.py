# rsmtool_*reference.py are scripts for an interpreter that has rsmtool installed (see
# test_scoring_vs_rsmtool.py), not test modules: keep them out of collection.
collect_ignore = [
    "rsmtool_reference.py",
    "rsmtool_fairness_reference.py",
    "rsmtool_helpers_reference.py",
    "rsmtool_options_reference.py",
]
