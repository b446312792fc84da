"""Benchmarks: each measures the project and a baseline in the same run (see bench/README.md)."""
