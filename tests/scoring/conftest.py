# rsmtool_reference.py is a script for an interpreter that has rsmtool installed
# (see test_scoring_vs_rsmtool.py), not a test module: keep it out of collection.
collect_ignore = ["rsmtool_reference.py"]
