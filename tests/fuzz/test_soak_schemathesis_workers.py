"""The soak's schemathesis runs one worker thread where the interpreter cannot parse Python in
two threads at once (CPython gh-106905), two elsewhere."""

from __future__ import annotations

import pytest
from tests.fuzz.test_soak import schemathesis_workers


@pytest.mark.parametrize(
    ("version", "workers"),
    [
        ((3, 11, 0), 1),
        ((3, 11, 7), 1),  # this machine's: "AST constructor recursion depth mismatch"
        ((3, 11, 8), 2),
        ((3, 11, 14), 2),
        ((3, 12, 1), 1),
        ((3, 12, 2), 2),
        ((3, 13, 0), 2),
        ((3, 14, 1), 2),
    ],
)
def test_schemathesis_runs_one_worker_where_two_threads_cannot_parse_at_once(
    version: tuple[int, int, int], workers: int
) -> None:
    assert schemathesis_workers(version) == workers
