"""Codex's apply_patch conformance scenarios, run the way codex's own runner does.

Each directory under ``../shared/conformance/apply_patch/scenarios`` is one case:
copy ``input/`` into an empty directory, apply ``patch.txt`` there, and compare the
whole resulting tree (directories and file bytes, nothing extra) with
``expected/``. On top of codex's runner, which ignores the output, the text each
scenario must produce is checked too: the messages codex's CLI tests assert, and
the same format for the scenarios codex asserts no output for.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from actors.tools.apply_patch import (
    LocalPatchFiles,
    PatchApplyError,
    PatchParseError,
    apply_patch,
)

SCENARIOS = Path(__file__).resolve().parents[2].parent / "shared/conformance/apply_patch/scenarios"

SUCCESS = "Success. Updated the following files:\n"

# What each scenario prints: success text, or the failure text with {root} standing
# for the canonical directory the patch was applied in.
OUTCOMES: dict[str, tuple[bool, str]] = {
    "001_add_file": (True, SUCCESS + "A bar.md\n"),
    "002_multiple_operations": (True, SUCCESS + "A nested/new.txt\nM modify.txt\nD delete.txt\n"),
    "003_multiple_chunks": (True, SUCCESS + "M multi.txt\n"),
    "004_move_to_new_directory": (True, SUCCESS + "M renamed/dir/name.txt\n"),
    "005_rejects_empty_patch": (False, "No files were modified."),
    "006_rejects_missing_context": (
        False,
        "Failed to find expected lines in {root}/modify.txt:\nmissing",
    ),
    "007_rejects_missing_file_delete": (False, "Failed to delete file {root}/missing.txt"),
    "008_rejects_empty_update_hunk": (
        False,
        "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty",
    ),
    "009_requires_existing_file_for_update": (
        False,
        "Failed to read file to update {root}/missing.txt: No such file or directory (os error 2)",
    ),
    "010_move_overwrites_existing_destination": (True, SUCCESS + "M renamed/dir/name.txt\n"),
    "011_add_overwrites_existing_file": (True, SUCCESS + "A duplicate.txt\n"),
    "012_delete_directory_fails": (False, "Failed to delete file {root}/dir"),
    "013_rejects_invalid_hunk_header": (
        False,
        "Invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', "
        "'*** Update File: {path}'",
    ),
    "014_update_file_appends_trailing_newline": (True, SUCCESS + "M no_newline.txt\n"),
    "015_failure_after_partial_success_leaves_changes": (
        False,
        "Failed to read file to update {root}/missing.txt: No such file or directory (os error 2)",
    ),
    "016_pure_addition_update_chunk": (True, SUCCESS + "M input.txt\n"),
    "017_whitespace_padded_hunk_header": (True, SUCCESS + "M foo.txt\n"),
    "018_whitespace_padded_patch_markers": (True, SUCCESS + "M file.txt\n"),
    "019_unicode_simple": (True, SUCCESS + "M foo.txt\n"),
    "020_delete_file_success": (True, SUCCESS + "D obsolete.txt\n"),
    "020_whitespace_padded_patch_marker_lines": (True, SUCCESS + "M file.txt\n"),
    "021_update_file_deletion_only": (True, SUCCESS + "M lines.txt\n"),
    "022_update_file_end_of_file_marker": (True, SUCCESS + "M tail.txt\n"),
}


def scenario_params() -> list[object]:
    if not SCENARIOS.is_dir():
        reason = f"conformance scenarios not found at {SCENARIOS} (../shared is absent)"
        return [pytest.param(None, id="scenarios-absent", marks=pytest.mark.skip(reason=reason))]
    names = sorted(entry.name for entry in SCENARIOS.iterdir() if entry.is_dir())
    return [pytest.param(SCENARIOS / name, id=name) for name in names]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every directory (None) and file (its bytes) under ``root``, by relative path,
    following symlinks; a missing root is an empty tree, as in codex's runner."""
    tree: dict[str, bytes | None] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=True):
        for name in dirnames:
            tree[os.path.relpath(os.path.join(directory, name), root)] = None
        for name in filenames:
            path = os.path.join(directory, name)
            tree[os.path.relpath(path, root)] = Path(path).read_bytes()
    return tree


def test_every_scenario_has_a_known_outcome() -> None:
    if not SCENARIOS.is_dir():
        pytest.skip(f"conformance scenarios not found at {SCENARIOS} (../shared is absent)")
    names = {entry.name for entry in SCENARIOS.iterdir() if entry.is_dir()}
    assert names == set(OUTCOMES)


@pytest.mark.parametrize("scenario", scenario_params())
async def test_scenario(scenario: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", work, symlinks=False)
    else:
        work.mkdir()
    patch_text = (scenario / "patch.txt").read_text(encoding="utf-8")
    files = LocalPatchFiles(work)

    try:
        result = await apply_patch(patch_text, files)
    except (PatchParseError, PatchApplyError) as error:
        succeeded, output = False, str(error)
    else:
        succeeded, output = True, result.summary

    assert snapshot(work) == snapshot(scenario / "expected")
    expected = OUTCOMES.get(scenario.name)
    if expected is not None:
        should_succeed, text = expected
        if not should_succeed:
            text = text.replace("{root}", files.root)
        assert (succeeded, output) == (should_succeed, text)
