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

from compozy_mcp.loops.contracts import live_contract
from compozy_mcp.native.registry import ToolRegistry
from compozy_mcp.views import SELECTOR_FIELD

#: the document format that knows views; older documents are translated on load
VIEWS_FORMAT = 2

#: tool id -> (input schema digest, output schema digest) of the tool's contract before views
SUPERSEDED: Mapping[str, tuple[str, str]] = {
    "compozy__session_create": (
        "40ad28947f71caa47526e9860838e5e81726dc9a8bcbd3483a2822cc708445f3",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_status": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_list": (
        "98b5abe5d2c744f093236076aa8a70a5cd11d653ee7a9ad9d3af9e9769dba3d8",
        "1da45f00926577ff330225c8eab46c0b6225bf36247d739a8cd22c7dc580b7b4",
    ),
    "compozy__session_archive": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_unarchive": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_rename": (
        "e7d067e8b2e11f37db84500eacc06a950b531896f9975d9f33c2d528d64f11d6",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_stop": (
        "15f1ffbbe526a7628ef8264e76407c5e2ac7b3ad6258633d82959a6b470382b4",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_spawn": (
        "b7980a0f12e3f07f6d3d9002c4f459908b7c916548d332071fe84325e4e7418e",
        "629dc47a4063864dea985d86c2b42dbddddfe840754f4a0948bab222bf0f2209",
    ),
    "compozy__session_fork": (
        "4ac9304679d5a8160b6d6435a3d8525eba079e23886140fe47af493cdba8d554",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_rewind": (
        "de7fe33a76e7da996ec56029d43f1b549b504ffb1bbf84e43ab9c38f54f5f92b",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_continue": (
        "d761691097c51914eb95b4cae98e016fe22fb82056f8440460defc625a24efa5",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_runtime_set": (
        "e9dd385cc5a6a67a91349344d4e95f56094e9191e4b22189e2b9b7c724c5eadf",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__session_runtime_clear": (
        "6b70717ee199bed2663b45b7aa3be734b3fa5122aa2f8631a47babf29d2f87f1",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__agent_list": (
        "0946cd1fcf35eb9a63939212f366e3a584bd868f442d96a723a9fb51d4bb86f7",
        "627c816d567e024cab980cc5752ff835e371788146a05753e65641ca521b89c8",
    ),
    "compozy__session_prompt": (
        "141259e02d8966e29431744dd07546d2123ac881df8fb4779c39920766a40dc7",
        "e4fe81f515e46b718325fb834ab3c608990619ec696bc012352fe321da9a453b",
    ),
    "compozy__session_wait": (
        "c5ea3a1b52b67ea98bfef1c97027200511015be75a312f6dd8913fc8fac7e29e",
        "e4fe81f515e46b718325fb834ab3c608990619ec696bc012352fe321da9a453b",
    ),
    "compozy__session_history": (
        "1087ca916df659546b20d79d8a61d7b83ad31280de752146eb7916cff1f8cb38",
        "6d282d21ccda6b0f3e46476580fcf04cbe1c3c4725a6ebaf909322954ed4c25c",
    ),
    "compozy__session_events": (
        "705536bc3194b61301df67d2758de9de01a87695f0ba0c04f4f0f61a7d2067e8",
        "370971b003068faaf04c1da66e9e4fa813ead399041dea82949cd33419b19583",
    ),
    "compozy__session_clear": (
        "17acf2da9af9bd3766a3bbf05c104268a6a2d04d93616924ff623c5d755ec82f",
        "6c3a47b27f624ecccf77c58758ce372ca1494e8b7af29e96d9b96cffec129a58",
    ),
    "compozy__tool_list": (
        "da83a167e3902b78f910d811851c52e8475e5c2b4aebf1206518f7503f5bd780",
        "1bb5a74700d86bcc7dd81c37104c58d1f95694d05c362982a5f423d637130811",
    ),
    "compozy__skill_list": (
        "51ac5778051058f965a4708dddce08f44f999583e57135a0262c1647bfe0bb77",
        "828793452f39f1fd3cc57c37e59ec0c46e02870b00f5c573deebd211b5749126",
    ),
    "compozy__skill_search": (
        "f5718443617bf08696ab0d9591a38d02556239f53499717827f8dd413f483a20",
        "1082b1f651cf372e8addac9b395ca151173d5f49464772b7fe105b0d4603c892",
    ),
    "compozy__hooks_list": (
        "7b7bcc2a7ddf54e789b80dc38e1e2f37f2921fd4efe30f749ec572640fd3a7fb",
        "f99f0e48978f59be796b45fe09f1c4e302106a3bacebbed17a5911fa452aacf2",
    ),
    "compozy__hooks_runs": (
        "51152e4318e12106937d9b6cb5def27073c11fc5ff8fc2fe6e6866d8ed2569d8",
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
