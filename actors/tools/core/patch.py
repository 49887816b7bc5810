"""apply_patch: the v4a engine (codex semantics) over the session's environment."""

from __future__ import annotations

import errno
import os
import posixpath
from typing import Annotated

import msgspec

from actors.kernel import Rejection
from actors.tools.apply_patch import PatchApplyError, PatchParseError, apply_patch
from actors.tools.apply_patch.files import NotUtf8Text, absolute_path
from actors.tools.core.context import ToolContext
from actors.tools.registry import Tool, ToolFailure
from environments.errors import (
    BinaryFile,
    FileNotFound,
    NotADirectory,
    NotAFile,
    NotUtf8,
    PermissionDenied,
)
from protocol.environment import DeleteFile, ReadFile, StatPath, WriteFile

_ERRNO = {
    FileNotFound: errno.ENOENT,
    PermissionDenied: errno.EACCES,
    NotAFile: errno.EISDIR,
    NotADirectory: errno.ENOTDIR,
}


def _as_os_error(refusal: Rejection, path: str) -> Exception:
    """The applier words failures from OSError/NotUtf8Text as codex does."""
    if isinstance(refusal, NotUtf8):
        return NotUtf8Text(refusal.detail)
    if isinstance(refusal, BinaryFile):
        return NotUtf8Text("stream did not contain valid UTF-8")
    code = next((n for kind, n in _ERRNO.items() if isinstance(refusal, kind)), errno.EIO)
    return OSError(code, str(refusal), path)


class EnvironmentPatchFiles:
    """:class:`PatchFiles` over an environment actor (local or remote alike).

    Requests carry the normalised absolute path, the one codex would use."""

    def __init__(self, context: ToolContext) -> None:
        self.context = context

    def display_path(self, path: str) -> str:
        return absolute_path(self.context.working_dir, path)

    async def _ask(self, request: object, path: str) -> object:
        try:
            return await self.context.environment.ask(request)
        except Rejection as refusal:
            raise _as_os_error(refusal, path) from None

    async def read_text(self, path: str) -> str:
        content = await self._ask(ReadFile(self.display_path(path), exact=True), path)
        return content.text  # type: ignore[attr-defined]

    async def write_text(self, path: str, text: str) -> None:
        await self._ask(WriteFile(self.display_path(path), text), path)

    async def parent_missing(self, path: str) -> bool:
        parent = posixpath.dirname(self.display_path(path))
        return await self._ask(StatPath(parent), path) == "missing"

    async def delete(self, path: str) -> None:
        # As in codex: through a link, there must be something, and not a directory.
        kind = await self._ask(StatPath(self.display_path(path)), path)
        if kind in ("missing", "directory"):
            code = errno.ENOENT if kind == "missing" else errno.EISDIR
            raise OSError(code, os.strerror(code), path)
        await self._ask(DeleteFile(self.display_path(path)), path)

    async def is_file(self, path: str) -> bool:
        return await self._ask(StatPath(self.display_path(path)), path) == "file"

    async def is_dir(self, path: str) -> bool:
        return await self._ask(StatPath(self.display_path(path)), path) == "directory"


class ApplyPatchParams(msgspec.Struct, frozen=True):
    patch: Annotated[
        str, msgspec.Meta(description="The patch, from '*** Begin Patch' to '*** End Patch'")
    ]


async def apply_patch_tool(arguments: ApplyPatchParams, context: ToolContext) -> str:
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
)
