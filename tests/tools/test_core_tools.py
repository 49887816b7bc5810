"""The core tools, run through the registry against a real LocalEnvironment actor."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from actors.kernel import Runtime
from actors.tools.core.context import ToolContext
from actors.tools.core.edit import EDIT_FILE
from actors.tools.core.files import LIST_DIR, READ_FILE, READ_MANY_FILES, WRITE_FILE
from actors.tools.core.patch import APPLY_PATCH
from actors.tools.core.search import GLOB, GREP
from actors.tools.core.shell import shell_tool
from actors.tools.registry import ToolOutcome, ToolRegistry
from environments.local import LocalEnvironment
from protocol.llm import ToolCall
from tests.tools.test_apply_patch_conformance import OUTCOMES, scenario_params, snapshot

TOOLS = ToolRegistry(
    [READ_FILE, WRITE_FILE, READ_MANY_FILES, LIST_DIR, EDIT_FILE, GREP, GLOB, APPLY_PATCH]
)
TOOLS.register(shell_tool(10_000))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = Path(os.path.realpath(tmp_path)) / "work"
    directory.mkdir()
    return directory


@pytest.fixture
async def context(work: Path) -> AsyncIterator[ToolContext]:
    async with Runtime() as runtime:
        env = await runtime.spawn(LocalEnvironment(work))
        yield ToolContext(env, str(work))


async def call(context: ToolContext, name: str, **arguments: Any) -> ToolOutcome:
    return await TOOLS.run(ToolCall("call-1", name, arguments), context)


def workdir(context: ToolContext) -> Path:
    return Path(context.working_dir)


async def test_read_file_notes_a_file_that_is_not_utf8(context: ToolContext) -> None:
    (workdir(context) / "legacy.txt").write_bytes(b"r\xe9sum\xe9\nna\xefve\n")
    (workdir(context) / "plain.txt").write_text("plain\n")
    read = await call(context, "read_file", file_path="legacy.txt")
    assert not read.is_error
    assert read.output == (
        f"[note: {workdir(context)}/legacy.txt is not valid utf-8 (invalid utf-8 sequence"
        " of 1 bytes from index 1); read as cp1252]\n1 | r\u00e9sum\u00e9\n2 | na\u00efve"
    )
    plain = await call(context, "read_file", file_path="plain.txt")
    assert plain.output == "1 | plain"
    many = await call(context, "read_many_files", paths=["plain.txt", "legacy.txt"])
    assert "read as cp1252]\n1 | r\u00e9sum\u00e9" in many.output
    assert "\ufffd" not in many.output


async def test_write_read_list_and_read_many(context: ToolContext) -> None:
    written = await call(context, "write_file", file_path="src/app.py", content="a = 1\nb = 2\n")
    assert written.output == f"Wrote 12 bytes to {workdir(context)}/src/app.py"
    read = await call(context, "read_file", file_path="src/app.py", offset=2)
    assert (read.output, read.is_error) == ("2 | b = 2", False)
    missing = await call(context, "read_file", file_path="nope.py")
    assert missing.is_error and "does not exist" in missing.output
    listing = await call(context, "list_dir", depth=2)
    assert listing.output == "src/\nsrc/app.py (12 bytes)"
    many = await call(context, "read_many_files", paths=["src/app.py", "gone.txt"])
    assert many.output.startswith(f"==> {workdir(context)}/src/app.py <==\n1 | a = 1\n2 | b = 2")
    assert "==> gone.txt <==\n[error: " in many.output


async def test_edit_file_exact_unique_all_and_fallback(context: ToolContext) -> None:
    target = workdir(context) / "m.py"
    target.write_bytes(b"def f():\r\n    return 1\r\n\r\nx = 1\r\nx = 1\r\n")
    done = await call(
        context, "edit_file", file_path="m.py", old_string="return 1", new_string="return 2"
    )
    assert done.output == f"Replaced 1 occurrence in {target}"
    assert target.read_bytes() == b"def f():\r\n    return 2\r\n\r\nx = 1\r\nx = 1\r\n"
    twice = await call(context, "edit_file", file_path="m.py", old_string="x = 1", new_string="y")
    assert twice.is_error and "occurs 2 times" in twice.output
    both = await call(
        context,
        "edit_file",
        file_path="m.py",
        old_string="x = 1",
        new_string="x = 3",
        replace_all=True,
    )
    assert both.output == f"Replaced 2 occurrences in {target}"
    absent = await call(
        context, "edit_file", file_path="m.py", old_string="nothing", new_string="z"
    )
    assert absent.is_error and "was not found" in absent.output
    loose = await call(
        context,
        "edit_file",
        file_path="m.py",
        old_string="def f():\n  return   2",
        new_string="def f():\r\n    return 4",
    )
    assert "whitespace-tolerant fallback" in loose.output and not loose.is_error
    assert target.read_bytes() == b"def f():\r\n    return 4\r\n\r\nx = 3\r\nx = 3\r\n"


async def test_shell_reports_streams_exit_and_timeouts(context: ToolContext) -> None:
    ran = await call(context, "shell", command="echo out; echo err >&2; exit 4")
    assert ran.output.startswith("out\n[stderr]\nerr\n[exit code: 4, duration: ")
    slow = await call(context, "shell", command="echo partial; sleep 5", timeout_ms=300)
    assert slow.output.startswith("partial\n\n[ERROR: Command timed out after 300ms.")


async def test_grep_and_glob(context: ToolContext) -> None:
    (workdir(context) / "a.txt").write_text("alpha\nbeta\n")
    found = await call(context, "grep", pattern="bet")
    assert found.output == f"{workdir(context)}/a.txt:2:beta"
    assert (await call(context, "grep", pattern="zzz")).output == "No matches found."
    assert (await call(context, "glob", pattern="*.txt")).output == f"{workdir(context)}/a.txt"
    assert (await call(context, "glob", pattern="*.rs")).output == "No files found."


@pytest.mark.parametrize("scenario", scenario_params())
async def test_apply_patch_tool_passes_every_scenario_through_the_environment(
    scenario: Path, context: ToolContext
) -> None:
    work = workdir(context)
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", work, dirs_exist_ok=True)
    patch = (scenario / "patch.txt").read_text(encoding="utf-8")
    outcome = await call(context, "apply_patch", patch=patch)
    assert snapshot(work) == snapshot(scenario / "expected")
    succeeded, text = OUTCOMES[scenario.name]
    assert (not outcome.is_error, outcome.output) == (succeeded, text.replace("{root}", str(work)))
