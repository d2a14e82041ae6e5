"""Importing the ACP SDK without pydantic reading its models' source again.

Every model of ``acp.schema`` (about 280) asks pydantic for attribute docstrings
(``use_attribute_docstrings``): the string under a field becomes the field's description. To
find those strings, pydantic on Python before 3.13 tokenises and parses the source of each
class anew, from the frame defining it: a third of the CPU that importing the SDK takes (about
150 of 450 ms), paid by every agent process built on it (the echo agent) and by a daemon the
first time it starts an agent. A field's description only shows in a JSON schema, and nothing
in compozy asks an ACP model for one, so while the SDK is imported its models' docstrings are
not looked for. Every other model is built as always.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: the package whose models are built without their attribute docstrings
SDK = "acp"
#: pydantic's function that reads them (``pydantic._internal._fields``); where a pydantic
#: release no longer has it, the SDK is imported as it always was
DOCSTRING_READER = "_update_fields_from_docstrings"

_importing = threading.RLock()  # re-entrant: an import inside the SDK's that comes here again


def _in_sdk(cls: type[Any]) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module == SDK or module.startswith(SDK + ".")


@contextmanager
def importing() -> Iterator[None]:
    """Around the imports of the ACP SDK in a module that uses it. Nothing is changed once
    the SDK is imported; while another thread imports it, this waits for that import."""
    with _importing:
        if f"{SDK}.schema" in sys.modules:
            yield
            return
        from pydantic._internal import _fields

        reader: Callable[..., None] | None = getattr(_fields, DOCSTRING_READER, None)
        if reader is None:
            yield
            return

        def outside_the_sdk(cls: type[Any], *args: Any, **kwargs: Any) -> None:
            if not _in_sdk(cls):
                reader(cls, *args, **kwargs)

        setattr(_fields, DOCSTRING_READER, outside_the_sdk)
        try:
            yield
        finally:
            setattr(_fields, DOCSTRING_READER, reader)
