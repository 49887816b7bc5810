"""The file system a patch is applied to, and its local-directory implementation.

The applier never touches the disk itself: it goes through :class:`PatchFiles`, so
the ``apply_patch`` tool can run the same engine against any execution environment
(a local directory, a remote host over SSH, a container). Paths are the ones
written in the patch: relative paths are resolved against the environment's
working directory, absolute paths are used as they are (codex accepts both), and
either is then normalised lexically (``.``, ``..``, doubled and trailing slashes),
as codex does, before it is used or shown.

Failures are reported as :class:`OSError` (with ``errno`` set when the cause is
known), and files that are not UTF-8 as :class:`NotUtf8Text`, so the applier can
word them the way codex does.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from typing import Protocol

import trio

from environments.textfiles import utf8_error_text


class NotUtf8Text(Exception):
    """The file's bytes are not UTF-8; ``detail`` says where, in codex's words."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def absolute_path(working_dir: str, path: str) -> str:
    """``path`` resolved against ``working_dir`` and normalised without touching
    the file system, the way codex turns a patch's path into the one it uses."""
    normal = posixpath.normpath(posixpath.join(working_dir, path))
    # POSIX lets normpath keep a leading "//"; codex's paths never start so.
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


class PatchFiles(Protocol):
    """What the applier needs from a file system."""

    def display_path(self, path: str) -> str:
        """The absolute, normalised form of ``path``: the file operated on, and the
        name error messages show (see :func:`absolute_path`)."""
        ...

    async def read_text(self, path: str) -> str:
        """The file's text, decoded as UTF-8, line endings untouched; raises
        :class:`NotUtf8Text` for any other bytes (never decodes lossily)."""
        ...

    async def write_text(self, path: str, text: str) -> None:
        """Create or replace the file with ``text`` (UTF-8, line endings untouched),
        creating missing parent directories."""
        ...

    async def parent_missing(self, path: str) -> bool:
        """Whether nothing is where the directory holding ``path`` should be (a
        dangling link counts as nothing); after a failed write, codex's words for
        the failure depend on it."""
        ...

    async def delete(self, path: str) -> None:
        """Remove the file. As in codex, the path must lead (through any symbolic
        link) to something that is not a directory, else :class:`OSError`; a link
        is removed, not its target."""
        ...

    async def is_file(self, path: str) -> bool:
        """Whether ``path`` is an existing regular file (following symlinks)."""
        ...

    async def is_dir(self, path: str) -> bool:
        """Whether ``path`` is an existing directory (following symlinks)."""
        ...


class LocalPatchFiles:
    """:class:`PatchFiles` over a directory of the local machine.

    ``root`` is canonicalised once (symlinks resolved), as codex does with its
    working directory, so messages name the real location. Blocking calls run in
    worker threads through :class:`trio.Path`.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(root)

    def display_path(self, path: str) -> str:
        return absolute_path(self.root, path)

    def _path(self, path: str) -> trio.Path:
        return trio.Path(self.display_path(path))

    async def read_text(self, path: str) -> str:
        data = await self._path(path).read_bytes()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NotUtf8Text(utf8_error_text(error)) from None

    async def write_text(self, path: str, text: str) -> None:
        target = self._path(path)
        await target.parent.mkdir(parents=True, exist_ok=True)
        await target.write_bytes(text.encode("utf-8"))

    async def parent_missing(self, path: str) -> bool:
        try:
            await trio.Path(os.path.dirname(self.display_path(path))).stat()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return False

    async def delete(self, path: str) -> None:
        target = self._path(path)
        if stat.S_ISDIR((await target.stat()).st_mode):  # follows links; raises if dangling
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
        await target.unlink()

    async def is_file(self, path: str) -> bool:
        return await self._path(path).is_file()

    async def is_dir(self, path: str) -> bool:
        return await self._path(path).is_dir()
