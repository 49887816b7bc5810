"""The v4a engine's files (:class:`PatchFiles`) over the session's environment
actor, local or remote alike: what :mod:`actors.tools.core.patch`'s tool applies
a patch through."""

from __future__ import annotations

import errno
import os
import posixpath

from actors.kernel import Rejection
from actors.tools.apply_patch.files import NotUtf8Text, absolute_path
from actors.tools.core.context import ToolContext
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

    Requests carry the normalised absolute path, the one codex would use, or
    under a policy the resolved path it judged for that target (messages still
    show the path as codex would)."""

    def __init__(self, context: ToolContext) -> None:
        self.context = context

    def display_path(self, path: str) -> str:
        return absolute_path(self.context.working_dir, path)

    def _target(self, path: str) -> str:
        if self.context.clearance is None:
            return self.display_path(path)
        return self.context.path(path)

    async def _ask(self, request: object, path: str) -> object:
        try:
            return await self.context.environment.ask(request)
        except Rejection as refusal:
            raise _as_os_error(refusal, path) from None

    async def read_text(self, path: str) -> str:
        guard = self.context.guard
        content = await self._ask(ReadFile(self._target(path), exact=True, guard=guard), path)
        return content.text  # type: ignore[attr-defined]

    async def write_text(self, path: str, text: str) -> None:
        await self._ask(WriteFile(self._target(path), text, guard=self.context.guard), path)

    async def parent_missing(self, path: str) -> bool:
        parent = posixpath.dirname(self._target(path))
        return await self._ask(StatPath(parent, guard=self.context.guard), path) == "missing"

    async def delete(self, path: str) -> None:
        # As in codex: through a link, there must be something, and not a directory.
        guard = self.context.guard
        kind = await self._ask(StatPath(self._target(path), guard=guard), path)
        if kind in ("missing", "directory"):
            code = errno.ENOENT if kind == "missing" else errno.EISDIR
            raise OSError(code, os.strerror(code), path)
        entry = (
            self.display_path(path) if self.context.clearance is None else self.context.entry(path)
        )
        await self._ask(DeleteFile(entry, guard=guard), path)

    async def is_file(self, path: str) -> bool:
        guard = self.context.guard
        return await self._ask(StatPath(self._target(path), guard=guard), path) == "file"

    async def is_dir(self, path: str) -> bool:
        guard = self.context.guard
        return await self._ask(StatPath(self._target(path), guard=guard), path) == "directory"
