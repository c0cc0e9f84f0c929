"""Pinned records of every domain (tests/test_pinned_records.py): cases, inputs, pins."""
