"""Every package compozy_mcp imports is one it declares (``[project].dependencies``): nothing
arrives only because another dependency happens to bring it, and every module imports with
nothing installed but the declared dependencies and what they require in turn."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "compozy_mcp"


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(text) for text in project["dependencies"]]


def _name(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _providers() -> dict[str, set[str]]:
    """Top-level module -> the distributions (normalized names) that install it."""
    return {
        module: {_name(dist) for dist in dists}
        for module, dists in importlib.metadata.packages_distributions().items()
    }


def _imported_top_levels(paths: Iterable[Path]) -> dict[str, set[str]]:
    """Top-level module -> the source files that import it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO)))
    return found


def test_every_imported_package_is_a_declared_dependency() -> None:
    declared = {_name(req.name) for req in _declared()}
    providers = _providers()
    undeclared = {}
    for module, files in sorted(_imported_top_levels(SOURCE.rglob("*.py")).items()):
        if module in sys.stdlib_module_names or module == "compozy_mcp":
            continue
        if not providers.get(module, set()) & declared:
            undeclared[module] = sorted(files)
    assert undeclared == {}, "imported but not declared in pyproject.toml"


def _closure(requirements: Iterable[Requirement]) -> set[str]:
    """The distributions installed with ``requirements`` (each one's own requirements, their
    markers evaluated here, extras followed)."""
    seen: set[str] = set()
    todo = [(req, frozenset[str]()) for req in requirements]
    while todo:
        req, extras = todo.pop()
        if req.marker is not None and not any(
            req.marker.evaluate({"extra": extra}) for extra in (extras or {""})
        ):
            continue
        name = _name(req.name)
        if name in seen:
            continue
        seen.add(name)
        wanted = frozenset(req.extras)
        for text in importlib.metadata.requires(req.name) or []:
            todo.append((Requirement(text), wanted))
    return seen


#: imports every module of compozy_mcp with a finder that refuses any top-level package not
#: installed by an allowed distribution (argv[1]: the allowed top-level names, as JSON)
IMPORT_EVERYTHING = r"""
import importlib, importlib.abc, json, pkgutil, sys

allowed = set(json.loads(sys.argv[1]))

class OnlyDeclared(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        if top in allowed or top in sys.stdlib_module_names or top.startswith("_"):
            return None
        raise ModuleNotFoundError(f"{top} is not installed by a declared dependency", name=top)

sys.meta_path.insert(0, OnlyDeclared())
import compozy_mcp
imported = []
for info in pkgutil.walk_packages(compozy_mcp.__path__, "compozy_mcp."):
    if info.name.endswith("__main__"):
        continue
    importlib.import_module(info.name)
    imported.append(info.name)
print(json.dumps(imported))
"""


@pytest.mark.process
def test_every_module_imports_with_only_the_declared_dependencies() -> None:
    installed = _closure(_declared())
    allowed = sorted(
        {module for module, dists in _providers().items() if dists & installed} | {"compozy_mcp"}
    )
    for dev_tool in ("pytest", "hypothesis", "mypy", "ruff", "importlinter"):
        assert dev_tool not in allowed  # the check would prove nothing otherwise
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING, json.dumps(allowed)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)
    modules = [
        path.relative_to(SOURCE.parent).with_suffix("").as_posix().replace("/", ".")
        for path in SOURCE.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    ]
    assert set(modules) <= set(imported)
