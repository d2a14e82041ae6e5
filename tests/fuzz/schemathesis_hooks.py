"""schemathesis hooks of ``make soak``, loaded by ``st`` through ``SCHEMATHESIS_HOOKS``: a
generated wait is asked for at most a few seconds (:mod:`tests.fuzz.waits`). schemathesis is
installed by ``make soak`` only, so it is imported by name here."""

from __future__ import annotations

import importlib
from typing import Any

from tests.fuzz.waits import cap_wait, waiting_input

schemathesis: Any = importlib.import_module("schemathesis")


def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    tool_input = waiting_input(case.method.upper(), case.operation.path, case.body)
    if tool_input is not None:
        cap_wait(tool_input)


schemathesis.hook(before_call)  # registered by its name
