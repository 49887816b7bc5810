"""Apply a parsed patch to a :class:`~actors.tools.apply_patch.files.PatchFiles`.

Operations are applied one at a time, in patch order, exactly as codex does: there
is no rollback, so when an operation fails the earlier ones stay applied (codex
scenario 015), and the error says which paths were already changed. Add File
overwrites an existing file, and Move to overwrites an existing destination.

The success summary and every failure message are codex's text, byte for byte,
because models are trained on them.
"""

from __future__ import annotations

import enum
import errno
import os

import msgspec

from actors.tools.apply_patch.files import NotUtf8Text, PatchFiles
from actors.tools.apply_patch.matcher import ChunkNotFoundError, apply_chunks
from actors.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    FileOperation,
    Patch,
    UpdateFile,
    parse_patch,
)

SUMMARY_HEADER = "Success. Updated the following files:\n"


class PatchResult(msgspec.Struct, frozen=True):
    """The paths a patch changed, as written in the patch (a move counts as a
    modification of its destination)."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """Codex's success text: the header, then ``A``, ``M`` and ``D`` lines,
        grouped in that order, each in patch order, each ending in a newline."""
        lines = [f"A {path}\n" for path in self.added]
        lines += [f"M {path}\n" for path in self.modified]
        lines += [f"D {path}\n" for path in self.deleted]
        return SUMMARY_HEADER + "".join(lines)


class ApplyFailure(enum.StrEnum):
    """Why applying stopped; each kind has its own codex message."""

    NO_FILES = "no_files"
    READ_FAILED = "read_failed"
    CONTEXT_NOT_FOUND = "context_not_found"
    LINES_NOT_FOUND = "lines_not_found"
    CREATE_DIRS_FAILED = "create_dirs_failed"
    WRITE_FAILED = "write_failed"
    DELETE_FAILED = "delete_failed"
    REMOVE_ORIGINAL_FAILED = "remove_original_failed"


class PatchApplyError(Exception):
    """A parsed patch could not be applied in full.

    ``str(error)`` is codex's message. ``applied`` lists what earlier operations
    already changed, and those changes were kept.
    """

    def __init__(self, kind: ApplyFailure, message: str, applied: PatchResult) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.applied = applied


def describe_read_error(error: OSError | NotUtf8Text, shown: str) -> str:
    """Word a failed read of ``shown`` as codex does: where the bytes stop being
    UTF-8, its own text for a path that is not a regular file, otherwise Rust's
    ``io::Error`` wording."""
    if isinstance(error, NotUtf8Text):
        return error.detail
    if error.errno == errno.EISDIR:
        return f"path `{shown}` is not a file"
    if error.errno is not None:
        return f"{os.strerror(error.errno)} (os error {error.errno})"
    return str(error)


async def apply_patch(patch_text: str, files: PatchFiles) -> PatchResult:
    """Parse ``patch_text`` and apply it; raises ``PatchParseError`` (nothing is
    touched) or :class:`PatchApplyError`."""
    return await apply_parsed_patch(parse_patch(patch_text), files)


async def apply_parsed_patch(patch: Patch, files: PatchFiles) -> PatchResult:
    """Apply ``patch``'s operations in order; see the module docstring."""
    progress = _Progress()
    if not patch.operations:
        raise PatchApplyError(ApplyFailure.NO_FILES, "No files were modified.", PatchResult())
    for operation in patch.operations:
        await _apply_one(operation, files, progress)
    return progress.result()


class _Progress:
    """The paths changed so far, for the result or for a partial-failure error."""

    def __init__(self) -> None:
        self.added: list[str] = []
        self.modified: list[str] = []
        self.deleted: list[str] = []

    def result(self) -> PatchResult:
        return PatchResult(tuple(self.added), tuple(self.modified), tuple(self.deleted))

    def fail(self, kind: ApplyFailure, message: str) -> PatchApplyError:
        return PatchApplyError(kind, message, self.result())


async def _apply_one(operation: FileOperation, files: PatchFiles, progress: _Progress) -> None:
    match operation:
        case AddFile(path=path, contents=contents):
            await _write(files, path, contents, progress)
            progress.added.append(path)
        case DeleteFile(path=path):
            try:
                await files.delete(path)
            except OSError:
                message = f"Failed to delete file {files.display_path(path)}"
                raise progress.fail(ApplyFailure.DELETE_FAILED, message) from None
            progress.deleted.append(path)
        case UpdateFile():
            await _update(operation, files, progress)


async def _update(operation: UpdateFile, files: PatchFiles, progress: _Progress) -> None:
    source = operation.path
    shown = files.display_path(source)
    try:
        original = await files.read_text(source)
    except (OSError, NotUtf8Text) as error:
        message = f"Failed to read file to update {shown}: {describe_read_error(error, shown)}"
        raise progress.fail(ApplyFailure.READ_FAILED, message) from None
    try:
        updated = apply_chunks(original, operation.chunks)
    except ChunkNotFoundError as missing:
        if missing.kind == "context":
            kind = ApplyFailure.CONTEXT_NOT_FOUND
            message = f"Failed to find context '{missing.text}' in {shown}"
        else:
            kind = ApplyFailure.LINES_NOT_FOUND
            message = f"Failed to find expected lines in {shown}:\n{missing.text}"
        raise progress.fail(kind, message) from None
    destination = operation.move_to
    if destination is None:
        await _write(files, source, updated, progress)
        progress.modified.append(source)
        return
    await _write(files, destination, updated, progress)
    # Deliberate deviation (docs/decisions.md): codex deletes the file when it is
    # moved onto itself; here the edited file stays.
    if files.display_path(destination) != shown:
        try:
            await files.delete(source)
        except OSError:
            message = f"Failed to remove original {shown}"
            raise progress.fail(ApplyFailure.REMOVE_ORIGINAL_FAILED, message) from None
    progress.modified.append(destination)


async def _write(files: PatchFiles, path: str, text: str, progress: _Progress) -> None:
    """Write as codex does. Its writer creates missing parent directories; it calls
    a failure "Failed to create parent directories" when the parent is missing
    (nothing there, or a dangling link) and "Failed to write file" otherwise."""
    try:
        await files.write_text(path, text)
    except OSError:
        shown = files.display_path(path)
        if await files.parent_missing(path):
            message = f"Failed to create parent directories for {shown}"
            raise progress.fail(ApplyFailure.CREATE_DIRS_FAILED, message) from None
        raise progress.fail(ApplyFailure.WRITE_FAILED, f"Failed to write file {shown}") from None
