"""Benchmarks: speed goals are measured here (``python -m benchmarks.<name>``), not in timed tests."""
