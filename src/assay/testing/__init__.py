"""Test support that ships with assay: synthetic data makers and scripted model servers.

Nothing here is used by the metric code; tests, benchmarks and demos import it.
"""
