"""Issue 14, item 1: which calls a permission mode asks about."""

from __future__ import annotations

import pytest

from compozy_mcp.approvals._modes import Need, PermissionMode, need
from compozy_mcp.native.registry import Risk

R, M, D, W = Risk.READ, Risk.MUTATING, Risk.DESTRUCTIVE, Risk.OPEN_WORLD
ASK, RUN, NO = Need.APPROVAL, Need.NOTHING, Need.REFUSAL
TABLE = {
    PermissionMode.DEFAULT: {R: RUN, M: ASK, D: ASK, W: ASK},
    PermissionMode.ACCEPT_EDITS: {R: RUN, M: RUN, D: ASK, W: ASK},
    PermissionMode.BYPASS: {R: RUN, M: RUN, D: RUN, W: RUN},
    PermissionMode.PLAN: {R: RUN, M: NO, D: NO, W: NO},
}


@pytest.mark.parametrize("mode", list(PermissionMode))
@pytest.mark.parametrize("risk", list(Risk))
def test_each_mode_asks_about_the_risks_its_table_row_names(
    mode: PermissionMode, risk: Risk
) -> None:
    assert need(mode, risk) is TABLE[mode][risk]


def test_the_modes_are_upstreams_names() -> None:
    assert [m.value for m in PermissionMode] == ["default", "accept_edits", "bypass", "plan"]
