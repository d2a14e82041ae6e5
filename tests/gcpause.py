"""The garbage collector of a test process, paused while it imports.

Collection imports the product, the MCP SDK, ACP's schema and every test module: hundreds of
thousands of objects that live until the process ends. The collector's full passes over them
while they pile up cost ~1.5 s of CPU per test process (each xdist worker collects on its own).
Importing this module (the first thing ``tests/conftest.py`` imports) pauses it;
:func:`resume` (at the end of collection) freezes what exists then (``gc.freeze``: left out of
every later pass) and turns it back on. :func:`freeze` does the same after a later bulk import
(the loop guard's warm-up). Garbage a test makes is collected as usual.
"""

from __future__ import annotations

import gc

gc.disable()


def resume() -> None:
    gc.freeze()
    gc.enable()


def freeze() -> None:
    gc.freeze()
