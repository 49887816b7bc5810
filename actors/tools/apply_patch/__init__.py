"""The apply_patch engine: v4a patches (spec Appendix A) with codex's semantics and
messages, applied through an abstract file system so any execution environment
can host it.

``parse_patch`` turns text into operations, ``apply_patch`` parses and applies,
``LocalPatchFiles`` is the file system over a local directory.
"""

from actors.tools.apply_patch.applier import (
    ApplyFailure,
    PatchApplyError,
    PatchResult,
    apply_parsed_patch,
    apply_patch,
)
from actors.tools.apply_patch.files import LocalPatchFiles, PatchFiles
from actors.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    FileOperation,
    Patch,
    PatchParseError,
    UpdateChunk,
    UpdateFile,
    parse_patch,
)

__all__ = [
    "AddFile",
    "ApplyFailure",
    "DeleteFile",
    "FileOperation",
    "LocalPatchFiles",
    "Patch",
    "PatchApplyError",
    "PatchFiles",
    "PatchParseError",
    "PatchResult",
    "UpdateChunk",
    "UpdateFile",
    "apply_parsed_patch",
    "apply_patch",
    "parse_patch",
]
