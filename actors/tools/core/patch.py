"""apply_patch: the v4a engine (codex semantics) over the session's environment.

The tool's declaration; the engine (:mod:`actors.tools.apply_patch`) and its files
over the environment (:mod:`actors.tools.core.patch_files`) are imported by the
first call or the first patch judged, not by every session's start (issue 36)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from actors.tools.core.context import ToolContext
from actors.tools.paths import PathDeclaration
from actors.tools.registry import Tool, ToolFailure
from actors.tools.tool import DiffFields, OutputLimits


def patch_targets(arguments: Mapping[str, Any]) -> list[str]:
    """Every path the patch's operations touch, as the parser reads them (the
    applier's own targets, ``Move to`` included); a patch that does not parse
    touches nothing."""
    text = arguments.get("patch")
    if not isinstance(text, str):
        return []

    from actors.tools.apply_patch import PatchParseError, UpdateFile, parse_patch

    try:
        patch = parse_patch(text)
    except PatchParseError:
        return []
    found: list[str] = []
    for operation in patch.operations:
        found.append(operation.path)
        if isinstance(operation, UpdateFile) and operation.move_to is not None:
            found.append(operation.move_to)
    return found


class ApplyPatchParams(msgspec.Struct, frozen=True):
    patch: Annotated[
        str, msgspec.Meta(description="The patch, from '*** Begin Patch' to '*** End Patch'")
    ]


async def apply_patch_tool(arguments: ApplyPatchParams, context: ToolContext) -> str:
    from actors.tools.apply_patch import PatchApplyError, PatchParseError, apply_patch
    from actors.tools.core.patch_files import EnvironmentPatchFiles

    try:
        result = await apply_patch(arguments.patch, EnvironmentPatchFiles(context))
    except (PatchParseError, PatchApplyError) as failure:
        raise ToolFailure(str(failure)) from None
    return result.summary


APPLY_PATCH = Tool(
    "apply_patch",
    "Apply code changes in the v4a patch format: '*** Begin Patch', then '*** Add File: "
    "path', '*** Delete File: path' or '*** Update File: path' sections (with '@@' hunks "
    "of ' ' context, '-' removed and '+' added lines), then '*** End Patch'.",
    apply_patch_tool,
    ApplyPatchParams,
    category="write",
    paths=PathDeclaration(extract=patch_targets),
    kind="edit",
    limits=OutputLimits(10_000, "tail"),
    agentic="writes_files",
    hook_names=("apply_patch", "Edit", "Write"),
    diff=DiffFields(patch="patch"),
)
