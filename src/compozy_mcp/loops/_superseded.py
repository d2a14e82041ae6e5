"""The upgrade path from before result views, for one release (spec: "Pre-view Loop snapshots
are translated to full for one release. The translation and the superseded schema digest table
are removed in the next release (#1462).") Delete this module then, with its callers' two lines.

Before views, a tool node got the complete record, and a run pinned the tool's contract without a
view. Such a snapshot is translated on load:

- a stored definition (``format`` 1) gets ``result_view: full`` on every tool node of a tool that
  now has views and whose params name no view, so it keeps reading the record it was written
  against;
- a run (``format`` 1) pins, per tool node, the contract it started with. Where that contract is
  the tool's last one before views (:data:`SUPERSEDED`: the digests of its input schema without
  the selector and of its record), it is the full view's today: the run keeps it, pinned as
  ``full``, and its nodes return the full record. Any other digest stays as it is, and the node
  fails with ``action_contract_stale`` as it would have.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from compozy_mcp.loops._contracts import live_contract
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.views import SELECTOR_FIELD

#: the document format that knows views; older documents are translated on load
VIEWS_FORMAT = 2

#: tool id -> (input schema digest, output schema digest) of the tool's contract before views
SUPERSEDED: Mapping[str, tuple[str, str]] = {
    "compozy__session_create": (
        "c9723705483c20baa52bb1546d191e31f1273705ff6cc18588bca8bcd1c4476e",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_status": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_list": (
        "50ff087df2c31114542f09790634b4d6bd5063a766d337da9f0050dd48eef8ca",
        "c24365c748e6b7e0d1ef80ab211c5dee5977a059c038864f10ea56a5f3fd341f",
    ),
    "compozy__session_archive": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_unarchive": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_rename": (
        "7cd17256b17d2de8da6239f9762a65a228df7290ced475d172f5bc0730ce61d3",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_stop": (
        "15f1ffbbe526a7628ef8264e76407c5e2ac7b3ad6258633d82959a6b470382b4",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_spawn": (
        "1308216b1ebc2ec998e0ff42093d6e25aa8d2fd2f66dd02b612d1fe811b4e572",
        "629dc47a4063864dea985d86c2b42dbddddfe840754f4a0948bab222bf0f2209",
    ),
    "compozy__session_fork": (
        "c139f7f6d2c3f791cd516fd74adbea7d5d481f13662e8748b2ccd787e18e8376",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_rewind": (
        "e4e3c832c5e49add31491ba87ac083b379daff8e1718e68fc0563a734d07dfa9",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_continue": (
        "6ca4a55d3d5300399181ff63eda73ed1ba1872d9557ef957b364ba22a0b85544",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_runtime_set": (
        "bb5bba2a8b1f615b9634b4aeea8f5e2f9a95e445e3f1a2afad53b62ad0079907",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__session_runtime_clear": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__agent_list": (
        "0946cd1fcf35eb9a63939212f366e3a584bd868f442d96a723a9fb51d4bb86f7",
        "f93b63046f6982d07e7d174b7f24d2fb2dc0b012a6d2828395bdb8836114aaa5",
    ),
    "compozy__session_prompt": (
        "276eb7e720f00e61ae3102d46635f4db31c302a769b4582237533bfd74f83745",
        "313474300455823356fa48bc23b20b4250118249864226da58ff8af5acef2a54",
    ),
    "compozy__session_wait": (
        "c5ea3a1b52b67ea98bfef1c97027200511015be75a312f6dd8913fc8fac7e29e",
        "313474300455823356fa48bc23b20b4250118249864226da58ff8af5acef2a54",
    ),
    "compozy__session_history": (
        "1087ca916df659546b20d79d8a61d7b83ad31280de752146eb7916cff1f8cb38",
        "cb1c5675da27b9b3e5cb5eaaa482eef285ae74f5d0dd17c5668bbb2c6f8ce0fc",
    ),
    "compozy__session_events": (
        "705536bc3194b61301df67d2758de9de01a87695f0ba0c04f4f0f61a7d2067e8",
        "370971b003068faaf04c1da66e9e4fa813ead399041dea82949cd33419b19583",
    ),
    "compozy__session_clear": (
        "17acf2da9af9bd3766a3bbf05c104268a6a2d04d93616924ff623c5d755ec82f",
        "7308c7305e20485e4f4d37c4f138978f7d2eebfce509a5738b2778c8df6f4dac",
    ),
    "compozy__tool_list": (
        "05c100b2651ada994bb58447e56f4e27c737f05e4f37787aee7925415d84e534",
        "1bb5a74700d86bcc7dd81c37104c58d1f95694d05c362982a5f423d637130811",
    ),
    "compozy__skill_list": (
        "51ac5778051058f965a4708dddce08f44f999583e57135a0262c1647bfe0bb77",
        "828793452f39f1fd3cc57c37e59ec0c46e02870b00f5c573deebd211b5749126",
    ),
    "compozy__skill_search": (
        "3bfc782ac1d4db25a2b1b8afde1e713311f74ac1590680add6b9fc9413ff4447",
        "1082b1f651cf372e8addac9b395ca151173d5f49464772b7fe105b0d4603c892",
    ),
    "compozy__hooks_list": (
        "7b16c1e25dcd3552d8b190b3c977934c9ae23cf465aa3921837a7dbed61398f9",
        "f99f0e48978f59be796b45fe09f1c4e302106a3bacebbed17a5911fa452aacf2",
    ),
    "compozy__hooks_runs": (
        "6f201c553589734940d1bbfc25a9d5d455cd92d70a0519fb2f47e5477ea0815c",
        "a00801ee40271be6e2c7cc203279202c743c5cd055d73aed0287fbee0a4dde24",
    ),
}


def _is_pre_view(doc: Mapping[str, Any]) -> bool:
    return int(doc.get("format", 1)) < VIEWS_FORMAT


def translate_definition(doc: Mapping[str, Any], tools: ToolRegistry) -> dict[str, Any]:
    """A stored definition version as it reads today."""
    if not _is_pre_view(doc):
        return dict(doc)
    document = copy.deepcopy(doc.get("document", {}))
    graph = document.get("graph") if isinstance(document, dict) else None
    for node in (graph or {}).get("nodes") or []:
        if not isinstance(node, dict):
            continue
        tool = tools.find(str(node.get("kind")))
        if node.get("class") != "action" or tool is None or not tool.has_views:
            continue
        params = node.get("params")
        params = params if isinstance(params, dict) else {}
        params.setdefault(SELECTOR_FIELD, "full")
        node["params"] = params
    # the text no longer says what the document does: the translated document is the source
    return {**doc, "format": VIEWS_FORMAT, "document": document, "source": None}


def translate_run(doc: Mapping[str, Any], tools: ToolRegistry) -> dict[str, Any]:
    """A stored run as it reads today: contracts pinned before views become ``full``."""
    if not _is_pre_view(doc):
        return dict(doc)
    pinned: dict[str, Any] = {}
    for node_id, stored in (doc.get("contracts") or {}).items():
        contract = dict(stored)
        tool_id = str(contract.get("tool_id"))
        before = SUPERSEDED.get(tool_id)
        tool = tools.find(tool_id)
        digests = (contract.get("input_schema_digest"), contract.get("output_schema_digest"))
        if "view" not in contract and before is not None and digests == before and tool:
            pinned[node_id] = live_contract(tool, "full")
        else:
            pinned[node_id] = {**contract, "view": contract.get("view")}
    return {**doc, "format": VIEWS_FORMAT, "contracts": pinned}
