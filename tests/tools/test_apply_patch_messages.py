"""The apply_patch engine's exact texts and edge cases, beyond codex's scenarios.

Every success and failure message is compared whole, because the model reads them
and codex's wording is what it was trained on. Patches run on a real temporary
directory through ``LocalPatchFiles``.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from actors.tools.apply_patch import (
    AddFile,
    ApplyFailure,
    DeleteFile,
    LocalPatchFiles,
    Patch,
    PatchApplyError,
    PatchParseError,
    PatchResult,
    UpdateChunk,
    UpdateFile,
    apply_patch,
    parse_patch,
)
from actors.tools.apply_patch.matcher import seek_sequence

SUCCESS = "Success. Updated the following files:\n"
VALID_HEADERS = (
    "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', "
    "'*** Update File: {path}'"
)
LINE_PREFIXES = (
    "Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
)


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def write(root: Path, name: str, text: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))


def real(path: Path) -> str:
    """The canonical path messages show (synchronous, so tests call it freely)."""
    return os.path.realpath(path)


def listing(path: Path) -> list[str]:
    return sorted(os.listdir(path))


def read(root: Path, name: str) -> str:
    return (root / name).read_bytes().decode("utf-8")


async def apply_expecting_error(text: str, root: Path) -> PatchApplyError:
    with pytest.raises(PatchApplyError) as caught:
        await apply_patch(text, LocalPatchFiles(root))
    return caught.value


def parse_error(text: str) -> str:
    with pytest.raises(PatchParseError) as caught:
        parse_patch(text)
    return str(caught.value)


# --- success text -----------------------------------------------------------------


async def test_summary_groups_added_then_modified_then_deleted(tmp_path: Path) -> None:
    write(tmp_path, "gone.txt", "bye\n")
    write(tmp_path, "edit.txt", "one\n")
    text = patch(
        "*** Delete File: gone.txt",
        "*** Update File: edit.txt",
        "@@",
        "-one",
        "+two",
        "*** Add File: new/a.txt",
        "+a",
        "*** Add File: b.txt",
        "+b",
    )
    result = await apply_patch(text, LocalPatchFiles(tmp_path))
    assert result == PatchResult(
        added=("new/a.txt", "b.txt"), modified=("edit.txt",), deleted=("gone.txt",)
    )
    assert result.summary == SUCCESS + "A new/a.txt\nA b.txt\nM edit.txt\nD gone.txt\n"
    assert read(tmp_path, "edit.txt") == "two\n"
    assert read(tmp_path, "new/a.txt") == "a\n"
    assert not (tmp_path / "gone.txt").exists()


async def test_move_reports_the_destination_and_removes_the_source(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", 'print("Hi")\n')
    text = patch(
        "*** Update File: src/app.py",
        "*** Move to: src/main.py",
        "@@",
        '-print("Hi")',
        '+print("Hello, world!")',
    )
    result = await apply_patch(text, LocalPatchFiles(tmp_path))
    assert result.summary == SUCCESS + "M src/main.py\n"
    assert read(tmp_path, "src/main.py") == 'print("Hello, world!")\n'
    assert not (tmp_path / "src/app.py").exists()


async def test_move_onto_an_existing_destination_overwrites_it(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "from a\n")
    write(tmp_path, "b.txt", "old b\n")
    text = patch("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-from a", "+moved")
    result = await apply_patch(text, LocalPatchFiles(tmp_path))
    assert result.summary == SUCCESS + "M b.txt\n"
    assert read(tmp_path, "b.txt") == "moved\n"
    assert not (tmp_path / "a.txt").exists()


async def test_move_onto_itself_keeps_the_file(tmp_path: Path) -> None:
    # Deliberate deviation: codex writes the destination, then deletes the source,
    # which here is the same file.
    write(tmp_path, "same.txt", "old\n")
    text = patch("*** Update File: same.txt", "*** Move to: same.txt", "@@", "-old", "+new")
    result = await apply_patch(text, LocalPatchFiles(tmp_path))
    assert result.summary == SUCCESS + "M same.txt\n"
    assert read(tmp_path, "same.txt") == "new\n"


async def test_add_overwrites_an_existing_file(tmp_path: Path) -> None:
    write(tmp_path, "dup.txt", "old\n")
    result = await apply_patch(patch("*** Add File: dup.txt", "+new"), LocalPatchFiles(tmp_path))
    assert result.summary == SUCCESS + "A dup.txt\n"
    assert read(tmp_path, "dup.txt") == "new\n"


async def test_absolute_paths_are_used_as_they_are(tmp_path: Path) -> None:
    # Codex accepts absolute paths (it resolves relative ones against its cwd).
    root = tmp_path / "root"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere.txt"
    text = patch(f"*** Add File: {elsewhere}", "+outside")
    result = await apply_patch(text, LocalPatchFiles(root))
    assert result.summary == SUCCESS + f"A {elsewhere}\n"
    assert elsewhere.read_text() == "outside\n"


# --- parser edge cases ------------------------------------------------------------


@pytest.mark.parametrize("opener", ["<<EOF", "<<'EOF'", '<<"EOF"'])
async def test_heredoc_wrapped_patch_is_unwrapped(opener: str, tmp_path: Path) -> None:
    write(tmp_path, "file2.py", "import foo\n")
    inner = "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch"
    result = await apply_patch(f"{opener}\n{inner}\nEOF\n", LocalPatchFiles(tmp_path))
    assert result.summary == SUCCESS + "M file2.py\n"
    assert read(tmp_path, "file2.py") == "import foo\nbar\n"
    assert parse_patch(f"{opener}\n{inner}\nEOF\n").text == inner


def test_heredoc_with_mismatched_quotes_is_not_unwrapped() -> None:
    inner = "*** Begin Patch\n*** Add File: a\n+a\n*** End Patch"
    assert parse_error(f"<<\"EOF'\n{inner}\nEOF\n") == (
        "Invalid patch: The first line of the patch must be '*** Begin Patch'"
    )


def test_heredoc_without_end_patch_reports_the_last_line() -> None:
    assert parse_error("<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n") == (
        "Invalid patch: The last line of the patch must be '*** End Patch'"
    )


async def test_whitespace_padded_markers_are_accepted(tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "one\n")
    text = "\n  *** Begin Patch \n\t*** Update File: f.txt  \n@@\n-one\n+two\n *** End Patch\t\n\n"
    result = await apply_patch(text, LocalPatchFiles(tmp_path))
    assert result.summary == SUCCESS + "M f.txt\n"
    assert read(tmp_path, "f.txt") == "two\n"


def test_parsed_operations_are_frozen_structs() -> None:
    text = patch(
        "*** Add File: path/add.py",
        "+abc",
        "+def",
        "*** Delete File: path/delete.py",
        "*** Update File: path/update.py",
        "*** Move to: path/update2.py",
        "@@ def f():",
        "-    pass",
        "+    return 123",
        "",
        "@@",
        " tail",
        "*** End of File",
    )
    parsed = parse_patch(text)
    assert parsed == Patch(
        operations=(
            AddFile(path="path/add.py", contents="abc\ndef\n"),
            DeleteFile(path="path/delete.py"),
            UpdateFile(
                path="path/update.py",
                move_to="path/update2.py",
                chunks=(
                    # A blank line inside a chunk is an empty context line; context
                    # lines are paired (new index, old index) to keep the file's text.
                    UpdateChunk(
                        "def f():", ("    pass", ""), ("    return 123", ""), unchanged=((1, 1),)
                    ),
                    UpdateChunk(
                        None, ("tail",), ("tail",), is_end_of_file=True, unchanged=((0, 0),)
                    ),
                ),
            ),
        ),
        text=text.rstrip("\n"),
    )
    with pytest.raises(AttributeError):
        parsed.operations[0].path = "other"  # type: ignore[misc]
    assert msgspec.json.decode(msgspec.json.encode(parsed), type=Patch) == parsed


def test_first_chunk_may_omit_its_context_marker() -> None:
    parsed = parse_patch(patch("*** Update File: f.py", " import foo", "+bar"))
    assert parsed.operations == (
        UpdateFile(
            path="f.py",
            chunks=(
                UpdateChunk(None, ("import foo",), ("import foo", "bar"), unchanged=((0, 0),)),
            ),
        ),
    )


def test_crlf_patch_lines_are_read_like_lf() -> None:
    crlf = "*** Begin Patch\r\n*** Add File: a.txt\r\n+x\r\n*** End Patch\r\n"
    assert parse_patch(crlf).operations == (AddFile(path="a.txt", contents="x\n"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Invalid patch: The last line of the patch must be '*** End Patch'"),
        ("bad", "Invalid patch: The first line of the patch must be '*** Begin Patch'"),
        (
            "*** Begin Patch\nbad",
            "Invalid patch: The last line of the patch must be '*** End Patch'",
        ),
        (
            patch("*** Frobnicate File: foo"),
            f"Invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk "
            f"header. {VALID_HEADERS}",
        ),
        (
            patch("*** Add File: a.txt", "+a", "", "+b"),
            f"Invalid patch hunk on line 4: '' is not a valid hunk header. {VALID_HEADERS}",
        ),
        (
            patch("*** Update File: foo.txt"),
            "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty",
        ),
        (
            patch("*** Update File: a", "@@"),
            "Invalid patch hunk on line 4: Update hunk does not contain any lines",
        ),
        (
            patch("*** Update File: a", "@@", "*** End of File"),
            "Invalid patch hunk on line 4: Update hunk does not contain any lines",
        ),
        (
            patch("*** Update File: a", "@@", "bad"),
            f"Invalid patch hunk on line 4: Unexpected line found in update hunk: 'bad'. "
            f"{LINE_PREFIXES}",
        ),
        (
            patch("*** Update File: a", "@@", "-x", "+y", "foo"),
            "Invalid patch hunk on line 6: Expected update hunk to start with a @@ context "
            "marker, got: 'foo'",
        ),
    ],
    ids=[
        "empty-text",
        "no-begin",
        "no-end",
        "invalid-hunk-header",
        "blank-line-in-added-file",
        "empty-update",
        "chunk-without-lines",
        "end-of-file-without-lines",
        "unexpected-chunk-line",
        "second-chunk-without-marker",
    ],
)
def test_parse_error_messages(text: str, message: str) -> None:
    assert parse_error(text) == message


async def test_a_parse_error_touches_nothing(tmp_path: Path) -> None:
    text = patch("*** Add File: created.txt", "+hello", "*** Frobnicate File: foo")
    with pytest.raises(PatchParseError) as caught:
        await apply_patch(text, LocalPatchFiles(tmp_path))
    assert caught.value.line_number == 4
    assert caught.value.message.startswith("'*** Frobnicate File: foo' is not")
    assert listing(tmp_path) == []


# --- apply failures ---------------------------------------------------------------


async def test_empty_patch_modifies_nothing(tmp_path: Path) -> None:
    error = await apply_expecting_error("*** Begin Patch\n*** End Patch", tmp_path)
    assert str(error) == "No files were modified."
    assert error.kind is ApplyFailure.NO_FILES
    assert error.applied == PatchResult()


async def test_missing_context_lines_are_all_quoted(tmp_path: Path) -> None:
    write(tmp_path, "modify.txt", "line1\nline2\n")
    files = LocalPatchFiles(tmp_path)
    text = patch("*** Update File: modify.txt", "@@", " line1", "-missing", "-also missing")
    error = await apply_expecting_error(text, tmp_path)
    assert str(error) == (
        f"Failed to find expected lines in {files.root}/modify.txt:\nline1\nmissing\nalso missing"
    )
    assert error.kind is ApplyFailure.LINES_NOT_FOUND
    assert read(tmp_path, "modify.txt") == "line1\nline2\n"


async def test_missing_change_context(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "def f():\n    pass\n")
    text = patch("*** Update File: a.py", "@@ def nope():", "-    pass", "+    return 1")
    error = await apply_expecting_error(text, tmp_path)
    assert str(error) == f"Failed to find context 'def nope():' in {real(tmp_path)}/a.py"
    assert error.kind is ApplyFailure.CONTEXT_NOT_FOUND


async def test_update_of_a_missing_file(tmp_path: Path) -> None:
    text = patch("*** Update File: missing.txt", "@@", "-old", "+new")
    error = await apply_expecting_error(text, tmp_path)
    assert str(error) == (
        f"Failed to read file to update {real(tmp_path)}/missing.txt: "
        "No such file or directory (os error 2)"
    )
    assert error.kind is ApplyFailure.READ_FAILED


async def test_update_of_a_directory(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    error = await apply_expecting_error(patch("*** Update File: dir", "@@", "+x"), tmp_path)
    assert str(error) == (
        f"Failed to read file to update {real(tmp_path)}/dir: "
        f"path `{real(tmp_path)}/dir` is not a file"
    )


async def test_update_of_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    write(tmp_path, "bin.dat", b"\xff\xfe\x00")
    error = await apply_expecting_error(patch("*** Update File: bin.dat", "@@", "+x"), tmp_path)
    assert str(error) == (
        f"Failed to read file to update {real(tmp_path)}/bin.dat: "
        "invalid utf-8 sequence of 1 bytes from index 0"
    )


async def test_delete_of_a_missing_file(tmp_path: Path) -> None:
    error = await apply_expecting_error(patch("*** Delete File: missing.txt"), tmp_path)
    assert str(error) == f"Failed to delete file {real(tmp_path)}/missing.txt"
    assert error.kind is ApplyFailure.DELETE_FAILED


async def test_delete_of_a_directory_fails_and_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    error = await apply_expecting_error(patch("*** Delete File: dir"), tmp_path)
    assert str(error) == f"Failed to delete file {real(tmp_path)}/dir"
    assert (tmp_path / "dir").is_dir()


async def test_add_over_a_directory_fails_to_write(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    error = await apply_expecting_error(patch("*** Add File: dir", "+x"), tmp_path)
    assert str(error) == f"Failed to write file {real(tmp_path)}/dir"
    assert error.kind is ApplyFailure.WRITE_FAILED


async def test_add_under_a_file_fails_to_write(tmp_path: Path) -> None:
    write(tmp_path, "file.txt", "x\n")
    error = await apply_expecting_error(patch("*** Add File: file.txt/sub.txt", "+x"), tmp_path)
    # The parent exists (as a file): codex calls this a failed write.
    assert str(error) == f"Failed to write file {real(tmp_path)}/file.txt/sub.txt"
    assert error.kind is ApplyFailure.WRITE_FAILED


async def test_add_under_a_dangling_link_fails_to_create_parents(tmp_path: Path) -> None:
    (tmp_path / "gone").symlink_to("nowhere")
    error = await apply_expecting_error(patch("*** Add File: gone/sub.txt", "+x"), tmp_path)
    assert str(error) == f"Failed to create parent directories for {real(tmp_path)}/gone/sub.txt"
    assert error.kind is ApplyFailure.CREATE_DIRS_FAILED


async def test_failure_after_partial_success_keeps_and_reports_earlier_changes(
    tmp_path: Path,
) -> None:
    write(tmp_path, "old.txt", "bye\n")
    text = patch(
        "*** Add File: created.txt",
        "+hello",
        "*** Delete File: old.txt",
        "*** Update File: missing.txt",
        "@@",
        "-old",
        "+new",
    )
    error = await apply_expecting_error(text, tmp_path)
    assert error.applied == PatchResult(added=("created.txt",), deleted=("old.txt",))
    assert read(tmp_path, "created.txt") == "hello\n"
    assert not (tmp_path / "old.txt").exists()


async def test_root_is_canonicalised_in_messages(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    error = await apply_expecting_error(patch("*** Delete File: nope"), link)
    assert str(error) == f"Failed to delete file {real(target)}/nope"


# --- matching ---------------------------------------------------------------------


async def test_unicode_punctuation_in_the_file_matches_ascii_in_the_patch(tmp_path: Path) -> None:
    write(tmp_path, "quote.txt", "say \u201chi\u201d \u2014 it\u2019s\u00a0fine\nnext\n")
    text = patch("*** Update File: quote.txt", "@@", '-say "hi" - it\'s fine', "+replaced")
    await apply_patch(text, LocalPatchFiles(tmp_path))
    assert read(tmp_path, "quote.txt") == "replaced\nnext\n"


async def test_whitespace_differences_are_tolerated(tmp_path: Path) -> None:
    write(tmp_path, "ws.py", "def f():   \n\treturn 1\n")
    text = patch("*** Update File: ws.py", "@@", " def f():", "-    return 1", "+\treturn 2")
    await apply_patch(text, LocalPatchFiles(tmp_path))
    # As in codex, the context line keeps the file's text; only changed lines change.
    assert read(tmp_path, "ws.py") == "def f():   \n\treturn 2\n"


def test_an_exact_match_beats_an_earlier_fuzzy_one() -> None:
    lines = ["foo  ", "  foo", "foo"]
    assert seek_sequence(lines, ["foo"], 0, end_of_file=False) == 2
    assert seek_sequence(lines, ["foo "], 0, end_of_file=False) == 0
    assert seek_sequence(lines, [" foo"], 0, end_of_file=False) == 0
    assert seek_sequence(lines, ["bar"], 0, end_of_file=False) is None
    assert seek_sequence(lines, ["a", "b", "c", "d"], 0, end_of_file=False) is None


async def test_end_of_file_marker_matches_the_last_occurrence(tmp_path: Path) -> None:
    write(tmp_path, "eof.txt", "x\nmiddle\nx\n")
    text = patch("*** Update File: eof.txt", "@@", "-x", "+y", "*** End of File")
    await apply_patch(text, LocalPatchFiles(tmp_path))
    assert read(tmp_path, "eof.txt") == "x\nmiddle\ny\n"

    write(tmp_path, "plain.txt", "x\nmiddle\nx\n")
    await apply_patch(
        patch("*** Update File: plain.txt", "@@", "-x", "+y"), LocalPatchFiles(tmp_path)
    )
    assert read(tmp_path, "plain.txt") == "y\nmiddle\nx\n"


async def test_end_of_file_marker_fails_when_the_lines_are_not_last(tmp_path: Path) -> None:
    write(tmp_path, "eof.txt", "x\nlast\n")
    text = patch("*** Update File: eof.txt", "@@", "-x", "+y", "*** End of File")
    error = await apply_expecting_error(text, tmp_path)
    assert str(error) == f"Failed to find expected lines in {real(tmp_path)}/eof.txt:\nx"


async def test_change_context_picks_the_occurrence_after_it(tmp_path: Path) -> None:
    write(tmp_path, "c.py", "class A:\n    x = 1\nclass B:\n    x = 1\n")
    text = patch("*** Update File: c.py", "@@ class B:", "-    x = 1", "+    x = 2")
    await apply_patch(text, LocalPatchFiles(tmp_path))
    assert read(tmp_path, "c.py") == "class A:\n    x = 1\nclass B:\n    x = 2\n"


async def test_chunks_apply_in_order_and_keep_a_missing_final_newline_fixed(
    tmp_path: Path,
) -> None:
    write(tmp_path, "m.txt", "a\nb\nc\nd")
    text = patch("*** Update File: m.txt", "@@", "-a", "+A", "@@", " c", "-d", "+D", "+e")
    await apply_patch(text, LocalPatchFiles(tmp_path))
    assert read(tmp_path, "m.txt") == "A\nb\nc\nD\ne\n"


async def test_pure_addition_goes_to_the_end(tmp_path: Path) -> None:
    write(tmp_path, "p.txt", "one\ntwo\n")
    await apply_patch(patch("*** Update File: p.txt", "@@", "+three"), LocalPatchFiles(tmp_path))
    assert read(tmp_path, "p.txt") == "one\ntwo\nthree\n"


# --- the local file system --------------------------------------------------------


async def test_local_files_resolve_against_the_root(tmp_path: Path) -> None:
    files = LocalPatchFiles(tmp_path)
    await files.write_text("deep/er/f.txt", "a\r\nb")
    assert (tmp_path / "deep/er/f.txt").read_bytes() == b"a\r\nb"
    assert await files.read_text("deep/er/f.txt") == "a\r\nb"
    assert await files.is_file("deep/er/f.txt")
    assert not await files.is_dir("deep/er/f.txt")
    assert await files.is_dir("deep")
    assert not await files.is_file("deep")
    assert not await files.is_file("absent")
    await files.delete("deep/er/f.txt")
    assert not (tmp_path / "deep/er/f.txt").exists()
    assert files.display_path("x/y") == f"{real(tmp_path)}/x/y"
