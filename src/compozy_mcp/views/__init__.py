"""Result views: the selector, the declarative compact mask, projection and derived contracts."""

from compozy_mcp.views._spec import CompiledViews, ViewContract, ViewSpec, compile_views
from compozy_mcp.views.mask import KEEP, Each, Fields, ListRule, project
from compozy_mcp.views.selector import DEFAULT_VIEW, SELECTOR_FIELD, ResultView, select_view

__all__ = [
    "DEFAULT_VIEW",
    "KEEP",
    "SELECTOR_FIELD",
    "CompiledViews",
    "Each",
    "Fields",
    "ListRule",
    "ResultView",
    "ViewContract",
    "ViewSpec",
    "compile_views",
    "project",
    "select_view",
]
