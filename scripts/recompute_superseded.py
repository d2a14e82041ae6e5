"""Recompute the superseded-digest table (src/compozy_mcp/loops/superseded.py) from the live
registry, after a change to a tool's input schema or full record; prints how many changed.

The table is this release's snapshot of each tool's pre-view contract (its input without the
selector, its full record), recomputed while the release is made (it goes with #1462).

    python scripts/recompute_superseded.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from compozy_mcp.jsonutil import schema_digest
from compozy_mcp.loops import _superseded as superseded
from compozy_mcp.native import build_registry
from compozy_mcp.views import SELECTOR_FIELD

TABLE = Path(superseded.__file__)


def main() -> int:
    text = TABLE.read_text(encoding="utf-8")
    registry = build_registry()
    changed = 0
    for tool_id, (old_input, old_output) in superseded.SUPERSEDED.items():
        live = registry.get(tool_id)
        before = dict(live.input_schema)
        before["properties"] = {
            k: v for k, v in before["properties"].items() if k != SELECTOR_FIELD
        }
        assert live.views is not None
        new = (schema_digest(before), live.views.full.digest)
        if new != (old_input, old_output):
            changed += 1
            text = text.replace(
                f'    "{tool_id}": (\n        "{old_input}",\n        "{old_output}",\n    ),',
                f'    "{tool_id}": (\n        "{new[0]}",\n        "{new[1]}",\n    ),',
            )
    TABLE.write_text(text, encoding="utf-8")
    print(f"superseded digests recomputed: {changed} of {len(superseded.SUPERSEDED)} changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
