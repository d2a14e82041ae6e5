"""The ACP SDK imported without pydantic reading its models' source (``compozy_mcp.acp_sdk``):
its models lose only their docstring descriptions, every other model keeps them, and pydantic is
left as it was found."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic._internal import _fields

from compozy_mcp import acp_sdk

#: a field of an ACP model whose description comes only from the docstring under it
DOCUMENTED_FIELD = "acp.schema.AgentCapabilities.model_fields['load_session'].description"


def _fresh(body: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(body)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.process
def test_the_sdk_imported_by_compozy_has_no_docstring_descriptions_and_pydantic_is_restored() -> (
    None
):
    plain = _fresh(f"import acp.schema\nprint(bool({DOCUMENTED_FIELD}))")
    ours = _fresh(
        f"""
        from pydantic._internal import _fields
        before = _fields.{acp_sdk.DOCSTRING_READER}
        import compozy_mcp.runtime._connection
        import acp.schema
        print(bool({DOCUMENTED_FIELD}), _fields.{acp_sdk.DOCSTRING_READER} is before)
        """
    )
    # plain: pydantic read the docstring (the reader this module replaces still exists)
    assert (plain, ours) == ("True\n", "False True\n")


def _sdk_not_imported(monkeypatch: pytest.MonkeyPatch) -> object:
    """pydantic's docstring reader, the SDK looking not imported yet. Called in the test itself:
    the test run's own hooks may import the SDK between a fixture and the test."""
    monkeypatch.delitem(sys.modules, "acp.schema", raising=False)
    return getattr(_fields, acp_sdk.DOCSTRING_READER)


def test_while_the_sdk_imports_a_model_of_another_package_keeps_its_docstrings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _sdk_not_imported(monkeypatch)
    seen: list[str] = []

    def recording(cls: type, *args: object, **kwargs: object) -> None:
        seen.append(cls.__module__)  # and reads nothing: finding a class's source is slow

    monkeypatch.setattr(_fields, acp_sdk.DOCSTRING_READER, recording)
    with acp_sdk.importing():

        class Ours(BaseModel):
            model_config = ConfigDict(use_attribute_docstrings=True)

            value: int = 0
            """What the value is."""

        class Theirs(BaseModel):
            __module__ = "acp.schema"
            model_config = ConfigDict(use_attribute_docstrings=True)

            value: int = 0
            """What the value is."""

    assert (Ours.__module__, Theirs.__module__) == (__name__, "acp.schema")
    assert seen == [__name__]  # pydantic was not sent to read the SDK's model
    assert getattr(_fields, acp_sdk.DOCSTRING_READER) is recording  # put back as found


def test_once_the_sdk_is_imported_nothing_is_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "acp.schema", sys.modules.get("acp.schema", sys))
    reader = getattr(_fields, acp_sdk.DOCSTRING_READER)
    with acp_sdk.importing():
        assert getattr(_fields, acp_sdk.DOCSTRING_READER) is reader


def test_a_second_thread_waits_for_the_first_import_then_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = _sdk_not_imported(monkeypatch)
    entered, second_done = threading.Event(), threading.Event()
    seen_by_second: list[object] = []

    def second() -> None:
        entered.wait(10)
        with acp_sdk.importing():
            seen_by_second.append(getattr(_fields, acp_sdk.DOCSTRING_READER))
        second_done.set()

    thread = threading.Thread(target=second)
    thread.start()
    with acp_sdk.importing():
        entered.set()
        assert not second_done.wait(0.1)  # held back while this import runs
        monkeypatch.setitem(sys.modules, "acp.schema", sys)  # the import finished
    thread.join(10)
    assert seen_by_second == [reader]
    assert getattr(_fields, acp_sdk.DOCSTRING_READER) is reader


def test_importing_again_inside_an_import_neither_waits_nor_leaves_pydantic_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = _sdk_not_imported(monkeypatch)
    with acp_sdk.importing(), acp_sdk.importing():  # one module of the SDK importing another
        assert getattr(_fields, acp_sdk.DOCSTRING_READER) is not reader
    assert getattr(_fields, acp_sdk.DOCSTRING_READER) is reader
