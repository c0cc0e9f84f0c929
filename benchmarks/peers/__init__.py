"""The tools each benchmark compares (assay and its peers), one module per benchmark.

They live in this package, not next to the benchmarks, so that ``make bench`` (which runs
every ``benchmarks/*.py``) runs only the benchmarks themselves.
"""
