"""Benchmarks: catalog bytes, result bytes and call overhead (see ``benchmarks/README.md``).

Each script prints a readable table, or JSON with ``--json``; ``--quick`` is a tiny run for
tests. Run them from the repository root: ``python -m benchmarks.<script>``.
"""
