"""Benchmark scripts (opt-in; not part of the test suite). Run each as a script."""
