"""Issue 24, item 4: the contract that keeps private modules private fails on a reach-in."""

from __future__ import annotations

import pytest
from grimp import ImportGraph
from tests.contracts.private_modules import PrivateModulesContract, private_owner, reaches_in

pytestmark = pytest.mark.unit


def test_a_private_module_belongs_to_the_package_that_holds_it() -> None:
    assert private_owner("compozy_mcp.loops._runner") == "compozy_mcp.loops"
    assert private_owner("compozy_mcp.loops._lint.report") == "compozy_mcp.loops"
    assert private_owner("compozy_mcp.loops.runner") is None
    assert private_owner("compozy_mcp.__main__") is None


def test_only_its_own_package_may_import_it() -> None:
    assert not reaches_in("compozy_mcp.loops.service", "compozy_mcp.loops._runner")
    assert not reaches_in("compozy_mcp.loops.sub.x", "compozy_mcp.loops._runner")
    assert not reaches_in("compozy_mcp.loops", "compozy_mcp.loops._runner")
    assert reaches_in("compozy_mcp.native.loop_tools", "compozy_mcp.loops._runner")
    assert reaches_in("compozy_mcp.loopsx.a", "compozy_mcp.loops._runner")


def _graph(*imports: tuple[str, str]) -> ImportGraph:
    graph = ImportGraph()
    for importer, imported in imports:
        graph.add_module(importer)
        graph.add_module(imported)
        graph.add_import(importer=importer, imported=imported, line_number=3, line_contents="")
    return graph


def _contract() -> PrivateModulesContract:
    return PrivateModulesContract(
        name="private", session_options={}, contract_options={"containers": ["compozy_mcp"]}
    )


def test_the_contract_is_broken_by_a_reach_in_and_kept_without_one() -> None:
    inside = ("compozy_mcp.loops.service", "compozy_mcp.loops._runner")
    outside = ("compozy_mcp.native.loop_tools", "compozy_mcp.loops._runner")
    assert _contract().check(_graph(inside), verbose=False).kept
    broken = _contract().check(_graph(inside, outside), verbose=False)
    assert not broken.kept
    assert broken.metadata["reaches"] == [
        {"importer": outside[0], "imported": outside[1], "lines": ["3"]}
    ]
