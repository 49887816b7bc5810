"""What an update leaves in the file, byte for byte, and the parser's handling of
stray lines: each case here is one codex behaviour the differential test
(``test_apply_patch_differential.py``) found or checks, pinned with its exact
expected bytes so it holds even where codex cannot be fetched.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from actors.kernel import Runtime
from actors.tools.apply_patch import LocalPatchFiles, PatchParseError, apply_patch, parse_patch
from actors.tools.apply_patch.applier import PatchApplyError
from actors.tools.core.context import ToolContext
from actors.tools.core.patch import APPLY_PATCH
from actors.tools.registry import ToolRegistry
from environments.local import LocalEnvironment
from protocol.llm import ToolCall

HEADERS = (
    "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', "
    "'*** Update File: {path}'"
)


def update(*body: str, path: str = "f.txt") -> str:
    return "\n".join(["*** Begin Patch", f"*** Update File: {path}", *body, "*** End Patch"])


async def applied(tmp_path: Path, before: bytes, patch: str, name: str = "f.txt") -> bytes:
    (tmp_path / name).write_bytes(before)
    await apply_patch(patch, LocalPatchFiles(tmp_path))
    return (tmp_path / name).read_bytes()


@pytest.mark.parametrize(
    ("before", "body", "after"),
    [
        # Context copied loosely keeps the file's own text (whitespace, typography).
        (b"def f():   \n\treturn 1\n", ("@@", " def f():", "-\treturn 1", "+\treturn 2"), None),
        (
            "say \u201chi\u201d \u2014 ok\nx\n".encode(),
            ("@@", ' say "hi" - ok', "-x", "+y"),
            "say \u201chi\u201d \u2014 ok\ny\n".encode(),
        ),
        (b"a\nb  \nc\n", ("@@", " a", "-b", " c", "+C"), b"a\nc\nC\n"),
        (b"p  \nq  \n", ("@@", "-p", " q", "+p"), b"q  \np\n"),
        # A line removed and added again is written from the patch.
        (b"x  \ny\n", ("@@", "-x", "+x", " y"), b"x\ny\n"),
    ],
    ids=["whitespace", "typography", "context-after-removal", "moved-line", "re-added-line"],
)
async def test_context_lines_keep_the_files_text(
    tmp_path: Path, before: bytes, body: tuple[str, ...], after: bytes | None
) -> None:
    expected = b"def f():   \n\treturn 2\n" if after is None else after
    assert await applied(tmp_path, before, update(*body)) == expected


@pytest.mark.parametrize(
    ("before", "body", "after"),
    [
        (b"a\r\nb\r\n", ("@@", " a", "-b", "+c", "+d"), b"a\r\nc\r\nd\r\n"),
        (b"a\r\nb", ("@@", "+x"), b"a\r\nb\r\nx\r\n"),
        # Mixed endings: untouched and context lines keep theirs, new lines take
        # the first ending of the file.
        (b"a\nb\r\nc\n", ("@@", " b", "-c", "+C"), b"a\nb\r\nC\n"),
        (b"a\r\nb\nc\n", ("@@", "-b", "+B"), b"a\r\nB\r\nc\n"),
        # A lone CR ends a line too (and may be the preferred ending).
        (b"a\nmid\rline\nb\n", ("@@", "-mid", "+X"), b"a\nX\nline\nb\n"),
        (b"a\rb\n", ("@@", "+X"), b"a\rb\nX\r"),
    ],
    ids=["crlf", "crlf-no-final-newline", "mixed-lf-first", "mixed-crlf-first", "cr", "cr-first"],
)
async def test_line_endings_follow_the_file(
    tmp_path: Path, before: bytes, body: tuple[str, ...], after: bytes
) -> None:
    assert await applied(tmp_path, before, update(*body)) == after


@pytest.mark.parametrize(
    ("before", "body", "after"),
    [
        (b"a\nb\n\n", ("@@", "-a", "+A"), b"A\nb\n\n"),
        (b"a\nb\n\n", ("@@", "+Z"), b"a\nb\n\nZ\n"),
        (b"a\nb\n", ("@@", " b", "+"), b"a\nb\n\n"),
        (b"", ("@@", "+"), b"\n"),
        (b"\n", ("@@", "+x"), b"\nx\n"),
        (b"a\nb", ("@@", "-b", "+B", "*** End of File"), b"a\nB\n"),
        (b"a\nb\n", ("@@", " b", " ", "+c"), b"a\nb\n\nc\n"),
    ],
    ids=[
        "blank-last-line-kept",
        "addition-after-blank-lines",
        "blank-line-added",
        "blank-line-into-empty-file",
        "file-of-one-blank-line",
        "final-newline-added",
        "trailing-empty-context",
    ],
)
async def test_blank_last_lines(
    tmp_path: Path, before: bytes, body: tuple[str, ...], after: bytes
) -> None:
    assert await applied(tmp_path, before, update(*body)) == after


async def test_end_of_file_chunk_never_matches_before_the_previous_chunk(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc\n")
    text = update("@@", "-b", "+B", "@@", "-a", "-b", "-c", "*** End of File")
    with pytest.raises(PatchApplyError) as caught:
        await apply_patch(text, LocalPatchFiles(tmp_path))
    assert str(caught.value).endswith("f.txt:\na\nb\nc")
    assert (tmp_path / "f.txt").read_bytes() == b"a\nb\nc\n"


@pytest.mark.parametrize(
    ("body", "after"),
    [
        (("@@\t", "-b", "+B"), b"a\nB\n"),  # trailing whitespace after @@
        (("@@ a  ", "-b", "+B"), b"a\nB\n"),  # ... and after its context
        (("*** End of File", "@@", "-a"), b"b\n"),  # End of File before the first chunk
        (("", "@@", "-a"), b"b\n"),  # a blank first line is an empty context line
    ],
    ids=["empty-marker", "context-marker", "leading-end-of-file", "leading-blank"],
)
async def test_lenient_chunk_markers(tmp_path: Path, body: tuple[str, ...], after: bytes) -> None:
    assert await applied(tmp_path, b"a\nb\n", update(*body)) == after


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            update("@@", " a", "-b", "*** Stray", "+c"),
            "Invalid patch hunk on line 6: Expected update hunk to start with a @@ context "
            "marker, got: '*** Stray'",
        ),
        (
            update("@@", "-a", "*** End of File", "*** End of File"),
            "Invalid patch hunk on line 6: Expected update hunk to start with a @@ context "
            "marker, got: '*** End of File'",
        ),
        (
            update("*** Move to: g", "*** Move to: h"),
            "Invalid patch hunk on line 4: Unexpected line found in update hunk: '*** Move to: "
            "h'. Every line should start with ' ' (context line), '+' (added line), or '-' "
            "(removed line)",
        ),
        (
            update("", "*** Stray"),
            "Invalid patch hunk on line 4: Expected update hunk to start with a @@ context "
            "marker, got: '*** Stray'",
        ),
        (
            "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n*** End Patch",
            "Invalid patch: The last line of the patch must be '*** End Patch'",
        ),
        (
            update("@@", "-a", "*** Update File:x"),
            "Invalid patch hunk on line 5: Expected update hunk to start with a @@ context "
            "marker, got: '*** Update File:x'",
        ),
    ],
    ids=["stray", "second-end-of-file", "second-move", "blank-then-stray", "early-end", "bad-hdr"],
)
def test_stray_star_lines_are_reported_where_they_stand(text: str, message: str) -> None:
    with pytest.raises(PatchParseError) as caught:
        parse_patch(text)
    assert str(caught.value) == message


def test_an_early_end_patch_followed_by_blank_lines_ends_the_patch() -> None:
    text = "*** Begin Patch\n*** Delete File: a\n *** End Patch\n\n  \n*** End Patch\n"
    assert [op.path for op in parse_patch(text).operations] == ["a"]


def test_a_real_header_ends_an_update_section() -> None:
    parsed = parse_patch(update("@@", "-a", "*** Add File: g ", "+x"))
    assert [type(op).__name__ for op in parsed.operations] == ["UpdateFile", "AddFile"]
    with pytest.raises(PatchParseError) as caught:
        parse_patch(update("@@", "-a", "\t*** Add File: g"))
    assert str(caught.value).startswith("Invalid patch hunk on line 5: Expected update hunk")
    assert HEADERS not in str(caught.value)


async def test_paths_are_normalised_as_codex_does(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f.txt").write_bytes(b"a\n")
    root = str(LocalPatchFiles(tmp_path).root)
    text = update("@@", "-zz", path="d/.././f.txt")
    with pytest.raises(PatchApplyError) as caught:
        await apply_patch(text, LocalPatchFiles(tmp_path))
    assert str(caught.value) == f"Failed to find expected lines in {root}/f.txt:\nzz"
    # The summary keeps the path as written; a trailing slash still names the file.
    result = await apply_patch(update("@@", "-a", "+b", path="f.txt/"), LocalPatchFiles(tmp_path))
    assert result.summary.endswith("M f.txt/\n")
    assert (tmp_path / "f.txt").read_bytes() == b"b\n"


def test_every_trailing_carriage_return_of_a_patch_line_is_dropped() -> None:
    text = "*** Begin Patch\r\n*** Add File: g\r\n+x\r\r\n+\r\n*** End Patch\r\n"
    assert parse_patch(text).operations[0].contents == "x\n\n"  # type: ignore[union-attr]


# --- through the apply_patch tool and an environment actor --------------------------


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = Path(os.path.realpath(tmp_path)) / "work"
    directory.mkdir()
    return directory


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


@pytest.fixture
async def tool_context(work: Path) -> AsyncIterator[ToolContext]:
    async with Runtime() as runtime:
        yield ToolContext(await runtime.spawn(LocalEnvironment(work)), str(work))


async def run_tool(context: ToolContext, patch_text: str) -> tuple[bool, str]:
    outcome = await ToolRegistry([APPLY_PATCH]).run(
        ToolCall("call-1", "apply_patch", {"patch": patch_text}), context
    )
    return not outcome.is_error, outcome.output


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"caf\xe9 au lait\n", "invalid utf-8 sequence of 1 bytes from index 3"),
        (b"abc\xe2\x82", "incomplete utf-8 byte sequence from index 3"),
        (b"ok\xf0\x9f\x98z\n", "invalid utf-8 sequence of 3 bytes from index 2"),
    ],
    ids=["latin-1", "cut-short", "bad-continuation"],
)
async def test_a_file_that_is_not_utf8_is_refused_and_left_alone(
    tool_context: ToolContext, data: bytes, detail: str
) -> None:
    # Never decoded lossily and written back: that would corrupt the file.
    work = Path(tool_context.working_dir)
    (work / "f.txt").write_bytes(data)
    done = await run_tool(tool_context, update("@@", "+x"))
    assert done == (False, f"Failed to read file to update {work}/f.txt: {detail}")
    assert (work / "f.txt").read_bytes() == data
    with pytest.raises(PatchApplyError) as caught:  # the same words without the tool
        await apply_patch(update("@@", "+x"), LocalPatchFiles(work))
    assert str(caught.value) == done[1]


async def test_nul_bytes_are_text_as_in_codex(tool_context: ToolContext) -> None:
    work = Path(tool_context.working_dir)
    (work / "f.txt").write_bytes(b"a\x00b\nc\n")
    assert await run_tool(tool_context, update("@@", " a\x00b", "-c", "+C")) == (
        True,
        "Success. Updated the following files:\nM f.txt\n",
    )
    assert (work / "f.txt").read_bytes() == b"a\x00b\nC\n"


@pytest.mark.parametrize("through", ["tool", "engine"])
async def test_delete_goes_through_links_only_to_check_them(
    tool_context: ToolContext, through: str
) -> None:
    work = Path(tool_context.working_dir)
    (work / "t.txt").write_bytes(b"a\n")
    (work / "d").mkdir()
    for name, target in (("to-file", "t.txt"), ("to-dir", "d"), ("dangling", "nope")):
        (work / name).symlink_to(target)

    async def delete(name: str) -> tuple[bool, str]:
        text = f"*** Begin Patch\n*** Delete File: {name}\n*** End Patch"
        if through == "tool":
            return await run_tool(tool_context, text)
        try:
            return True, (await apply_patch(text, LocalPatchFiles(work))).summary
        except PatchApplyError as error:
            return False, str(error)

    assert await delete("to-file") == (True, "Success. Updated the following files:\nD to-file\n")
    assert await delete("to-dir") == (False, f"Failed to delete file {work}/to-dir")
    assert await delete("dangling") == (False, f"Failed to delete file {work}/dangling")
    assert listing(work) == ["d", "dangling", "t.txt", "to-dir"]
    assert (work / "t.txt").read_bytes() == b"a\n"


async def test_writes_go_through_links_and_keep_modes(work: Path) -> None:
    (work / "run.sh").write_bytes(b"echo a\n")
    (work / "run.sh").chmod(0o750)
    (work / "t.txt").write_bytes(b"a\n")
    (work / "link").symlink_to("t.txt")
    (work / "dangling").symlink_to("created.txt")
    text = (
        "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo a\n+echo b\n"
        "*** Update File: link\n@@\n-a\n+b\n*** Add File: dangling\n+new\n*** End Patch"
    )
    await apply_patch(text, LocalPatchFiles(work))
    assert (work / "run.sh").read_bytes() == b"echo b\n"
    assert (work / "run.sh").stat().st_mode & 0o777 == 0o750
    assert (work / "link").is_symlink()
    assert (work / "t.txt").read_bytes() == b"b\n"
    assert (work / "created.txt").read_bytes() == b"new\n"


async def test_a_write_under_a_file_or_a_dangling_link_is_refused_and_the_tool_goes_on(
    tool_context: ToolContext, work: Path
) -> None:
    # Creating the parents meets a file or a dangling link: a typed refusal, with
    # codex's words, and the environment keeps serving.
    (work / "e").write_bytes(b"x\n")
    (work / "gone").symlink_to("nowhere")

    def add(path: str) -> str:
        return f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch"

    assert await run_tool(tool_context, add("e/under.txt")) == (
        False,
        f"Failed to write file {work}/e/under.txt",
    )
    assert await run_tool(tool_context, add("gone/sub.txt")) == (
        False,
        f"Failed to create parent directories for {work}/gone/sub.txt",
    )
    assert await run_tool(tool_context, add("ok.txt")) == (
        True,
        "Success. Updated the following files:\nA ok.txt\n",
    )


@pytest.mark.parametrize(
    ("body", "moved_to"),
    [
        (("*** Move to: g.txt  ", "@@", "-a", "+b"), "g.txt"),  # trailing whitespace ignored
        (("*** End of File", "*** Move to: g.txt", "@@", "-a", "+b"), "g.txt"),
    ],
    ids=["padded", "after-end-of-file"],
)
def test_move_lines_read_as_codex_reads_them(body: tuple[str, ...], moved_to: str) -> None:
    operation = parse_patch(update(*body)).operations[0]
    assert operation.move_to == moved_to  # type: ignore[union-attr]


def test_a_move_line_without_a_path_is_not_a_move() -> None:
    with pytest.raises(PatchParseError) as caught:
        parse_patch(update("*** Move to: ", "@@", "-a"))
    assert str(caught.value).startswith(
        "Invalid patch hunk on line 3: Unexpected line found in update hunk: '*** Move to: '."
    )
