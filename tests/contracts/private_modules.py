"""An import-linter contract: no module reaches into another package's private modules.

A module whose name starts with ``_`` (``compozy_mcp.loops._runner``) is private to the package
that holds it: that package's modules (and its subpackages') may import it, no other module
may. A package shows what others use in its ``__init__`` (with ``__all__``) and in its modules
whose names have no leading ``_``. Registered in ``pyproject.toml`` (``contract_types``); run by
``make lint`` (``lint-imports``).
"""

from __future__ import annotations

from typing import Any

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def private_owner(module: str) -> str | None:
    """The package a private module belongs to (the part before its first ``_`` segment), or
    ``None`` when no segment of ``module`` is private (dunder names such as ``__main__`` are
    not)."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def reaches_in(importer: str, imported: str) -> bool:
    """Whether ``importer`` imports a private module of a package it is not part of."""
    owner = private_owner(imported)
    if owner is None:
        return False
    return importer != owner and not importer.startswith(owner + ".")


class PrivateModulesContract(Contract):
    type_name = "private_modules"

    containers = fields.SetField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        roots = {str(root) for root in self.containers}  # type: ignore[attr-defined]
        found: list[dict[str, Any]] = []
        for importer in sorted(graph.modules):
            if importer.split(".")[0] not in roots:
                continue
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if imported.split(".")[0] in roots and reaches_in(importer, imported):
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = [str(detail["line_number"]) for detail in details]
                    found.append({"importer": importer, "imported": imported, "lines": lines})
        return ContractCheck(kept=not found, metadata={"reaches": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for reach in check.metadata["reaches"]:
            output.print_error(
                f"{reach['importer']} imports {reach['imported']}, private to "
                f"{private_owner(reach['imported'])} (l.{', '.join(reach['lines'])})",
                bold=False,
            )
            output.new_line()
