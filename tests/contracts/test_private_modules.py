"""Issue 24, item 4: the contract that keeps private modules private fails on a reach-in."""

from __future__ import annotations

import pytest
from grimp import ImportGraph
from tests.contracts.private_modules import PrivateModulesContract, private_owner, reaches_in

pytestmark = pytest.mark.unit


def test_a_private_module_belongs_to_the_package_that_holds_it() -> None:
    assert private_owner("pkg.loops._runner") == "pkg.loops"
    assert private_owner("pkg.loops._lint.report") == "pkg.loops"
    assert private_owner("pkg.loops.runner") is None
    assert private_owner("pkg.__main__") is None


def test_only_its_own_package_may_import_it() -> None:
    assert not reaches_in("pkg.loops.service", "pkg.loops._runner")
    assert not reaches_in("pkg.loops.sub.x", "pkg.loops._runner")
    assert not reaches_in("pkg.loops", "pkg.loops._runner")
    assert reaches_in("pkg.native.loop_tools", "pkg.loops._runner")
    assert reaches_in("pkg.loopsx.a", "pkg.loops._runner")


def _graph(*imports: tuple[str, str]) -> ImportGraph:
    graph = ImportGraph()
    for importer, imported in imports:
        graph.add_module(importer)
        graph.add_module(imported)
        graph.add_import(importer=importer, imported=imported, line_number=3, line_contents="")
    return graph


def _contract() -> PrivateModulesContract:
    return PrivateModulesContract(
        name="private", session_options={}, contract_options={"containers": ["pkg"]}
    )


def test_the_contract_is_broken_by_a_reach_in_and_kept_without_one() -> None:
    inside = ("pkg.loops.service", "pkg.loops._runner")
    outside = ("pkg.native.loop_tools", "pkg.loops._runner")
    assert _contract().check(_graph(inside), verbose=False).kept
    broken = _contract().check(_graph(inside, outside), verbose=False)
    assert not broken.kept
    assert broken.metadata["reaches"] == [
        {"importer": outside[0], "imported": outside[1], "lines": ["3"]}
    ]


def test_every_package_of_the_product_states_its_face_in_all() -> None:
    """Issue 24, item 4: each package says what it offers (``__all__``), every name it lists
    is there, and none of them is private."""
    import importlib
    import pkgutil

    import compozy_mcp

    packages = [compozy_mcp.__name__] + [
        found.name
        for found in pkgutil.walk_packages(compozy_mcp.__path__, "compozy_mcp.")
        if found.ispkg
    ]
    assert len(packages) > 20
    for name in packages:
        package = importlib.import_module(name)
        face = getattr(package, "__all__", None)
        assert isinstance(face, list), name
        assert face, name
        for offered in face:
            assert not (offered.startswith("_") and not offered.startswith("__")), (name, offered)
            if not hasattr(package, offered):
                importlib.import_module(f"{name}.{offered}")  # a public module of the package
