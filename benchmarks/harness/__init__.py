"""The benchmark harness behind `python benchmarks/run.py` (see benchmarks/README.md)."""
