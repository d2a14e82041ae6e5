"""Approvals: when a call by a managed session needs a person's approval, the prompts that ask,
the answers, remembered grants, one-shot tokens and permission modes.

- :mod:`.digest`: the one input digest (and why it ignores ``result_view``);
- :mod:`.modes`: permission modes and what each asks of a call;
- :mod:`.tokens`: one-shot token secrets and their hashes;
- :mod:`.answers`: answering an interaction by its kind (``approval``, ``permission``, ...);
- :mod:`.service`: :class:`~.service.Approvals`, the check dispatch makes and everything the
  tools, the Host API and the CLI do with approvals.
"""

from compozy_mcp.approvals._answers import Answerer, Answerers
from compozy_mcp.approvals._digest import input_digest
from compozy_mcp.approvals._modes import PermissionMode
from compozy_mcp.approvals._service import DECISIONS, Approvals

__all__ = ["DECISIONS", "Answerer", "Answerers", "Approvals", "PermissionMode", "input_digest"]
