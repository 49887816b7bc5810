"""The ExecutionEnvironment behaviour suite, run against every environment kind."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
import trio
import trio.testing

from environments.capture import DEFAULT_CAPTURE_CAP
from environments.errors import BinaryFile, FileNotFound, InvalidRequest, NotAFile, NotUtf8
from protocol.environment import (
    DeleteFile,
    Describe,
    DirEntry,
    ExecCommand,
    FileExists,
    Glob,
    Grep,
    ImageFile,
    ListDirectory,
    ReadFile,
    StatPath,
    WriteFile,
)
from tests.environments.conftest import EnvUnderTest
from tests.environments.helpers import OutputSink
from tests.image_files import png
from tests.waiting import workers_per_cpu

HANG_GUARD = 20 * workers_per_cpu()  # stretched where workers share a CPU

# The leader traps SIGTERM and keeps going; its background child ignores SIGTERM.
# Both write their PIDs so the host can be asked about them afterwards.
STUBBORN = (
    "( trap '' TERM; exec sleep 600 ) & echo $! > child.pid; echo $$ > leader.pid; "
    "trap 'echo got-term' TERM; echo started; while true; do sleep 0.05; done"
)
SHELL_EXIT_ROUNDS = 40
"""Calls in a row whose shell must be gone at return (one in a few raced it before)."""


def _written(directory: Path, *names: str) -> bool:
    """Every file exists and holds a whole line (a pid being written is not yet read)."""
    paths = [directory / name for name in names]
    return all(path.exists() and path.read_text().endswith("\n") for path in paths)


async def test_write_creates_parents_and_read_numbers_lines(env: EnvUnderTest) -> None:
    written = await env.ref.ask(WriteFile("deep/er/notes.txt", "alpha\nbeta\ngamma\n"))
    assert written.bytes_written == len("alpha\nbeta\ngamma\n")
    assert (env.workdir / "deep/er/notes.txt").read_text() == "alpha\nbeta\ngamma\n"
    content = await env.ref.ask(ReadFile("deep/er/notes.txt"))
    assert content.text == "1 | alpha\n2 | beta\n3 | gamma"
    assert content.total_lines == 3
    window = await env.ref.ask(ReadFile(str(env.workdir / "deep/er/notes.txt"), offset=2, limit=1))
    assert (window.text, window.first_line, window.last_line) == ("2 | beta", 2, 2)
    plain = await env.ref.ask(ReadFile("deep/er/notes.txt", line_numbers=False))
    assert plain.text == "alpha\nbeta\ngamma"


async def test_exact_read_stat_and_delete(env: EnvUnderTest) -> None:
    (env.workdir / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (env.workdir / "folder").mkdir()
    exact = await env.ref.ask(ReadFile("crlf.txt", exact=True))
    assert exact.text == "one\r\ntwo\r\n"
    assert await env.ref.ask(StatPath("crlf.txt")) == "file"
    assert await env.ref.ask(StatPath("folder")) == "directory"
    assert await env.ref.ask(StatPath("nothing")) == "missing"
    await env.ref.ask(DeleteFile("crlf.txt"))
    assert not (env.workdir / "crlf.txt").exists()
    with pytest.raises(NotAFile):
        await env.ref.ask(DeleteFile("folder"))
    with pytest.raises(FileNotFound):
        await env.ref.ask(DeleteFile("crlf.txt"))


async def test_read_errors_are_typed(env: EnvUnderTest) -> None:
    (env.workdir / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (env.workdir / "folder").mkdir()
    with pytest.raises(FileNotFound):
        await env.ref.ask(ReadFile("missing.txt"))
    with pytest.raises(NotAFile):
        await env.ref.ask(ReadFile("folder"))
    with pytest.raises(BinaryFile):
        await env.ref.ask(ReadFile("blob.bin"))
    (env.workdir / "one.txt").write_text("only line\n")
    with pytest.raises(InvalidRequest):
        await env.ref.ask(ReadFile("one.txt", offset=5))


async def test_an_image_is_read_as_its_bytes_when_asked(env: EnvUnderTest) -> None:
    """``images=True`` (read_file's read): an image by its header, whatever its
    name, comes back byte for byte; without it, or when the header lies, it is
    read as any other file."""
    picture = png(4, 3)
    (env.workdir / "shot.dat").write_bytes(picture)
    (env.workdir / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00 not really")
    content = await env.ref.ask(ReadFile("shot.dat", images=True))
    assert content.image == ImageFile("image/png", 4, 3, len(picture), picture)
    assert content.text == ""
    with pytest.raises(BinaryFile):
        await env.ref.ask(ReadFile("shot.dat"))
    with pytest.raises(BinaryFile):
        await env.ref.ask(ReadFile("fake.png", images=True))


ENCODED_FILES = [
    # (bytes on disk, text read, the note's end); the rule: UTF-8, then a UTF-16 or
    # UTF-32 byte-order mark, then cp1252, then latin-1 (environments/textfiles.py).
    ("utf8.txt", "caf\u00e9 \u2192 ok\n".encode(), "caf\u00e9 \u2192 ok", None),
    ("cp1252.txt", b"caf\xe9 \x93quoted\x94\n", "caf\u00e9 \u201cquoted\u201d", "read as cp1252"),
    ("latin1.txt", b"caf\xe9 \x81\n", "caf\u00e9 \x81", "read as latin-1"),
    ("utf16.txt", "\ufeffcaf\u00e9\nzwei\n".encode("utf-16-le"), "caf\u00e9\nzwei",
     "is utf-16-le (by its byte-order mark), not utf-8"),
    ("utf16be.txt", "\ufeffcaf\u00e9\n".encode("utf-16-be"), "caf\u00e9",
     "is utf-16-be (by its byte-order mark), not utf-8"),
]  # fmt: skip


async def test_a_file_that_is_not_utf8_reads_with_a_note_naming_the_encoding(
    env: EnvUnderTest,
) -> None:
    for name, data, text, note in ENCODED_FILES:
        (env.workdir / name).write_bytes(data)
        content = await env.ref.ask(ReadFile(name, line_numbers=False))
        assert content.text == text, name
        assert "\ufffd" not in content.text
        if note is None:
            assert content.encoding_note is None
        else:
            assert content.encoding_note is not None and content.encoding_note.endswith(note)
            assert content.encoding_note.startswith(content.path)
    cp1252 = await env.ref.ask(ReadFile("cp1252.txt"))
    assert cp1252.encoding_note == (
        f"{cp1252.path} is not valid utf-8 (invalid utf-8 sequence of 1 bytes from index 3);"
        " read as cp1252"
    )
    # Exact reads (what editing tools use) still refuse rather than guess.
    with pytest.raises(NotUtf8):
        await env.ref.ask(ReadFile("cp1252.txt", exact=True))
    # A NUL byte with no byte-order mark is binary, as before; so is a mark that lies.
    (env.workdir / "odd.bin").write_bytes(b"\xff\xfea\x00b")
    with pytest.raises(BinaryFile):
        await env.ref.ask(ReadFile("odd.bin"))


async def test_file_exists_and_list_directory_with_depth(env: EnvUnderTest) -> None:
    (env.workdir / "src/pkg").mkdir(parents=True)
    (env.workdir / "src/pkg/mod.py").write_text("x = 1\n")
    (env.workdir / "README").write_text("hi\n")
    assert await env.ref.ask(FileExists("src/pkg/mod.py")) is True
    assert await env.ref.ask(FileExists("src/nope.py")) is False
    top = await env.ref.ask(ListDirectory("."))
    assert top == [DirEntry("README", False, 3), DirEntry("src", True, None)]
    deep = await env.ref.ask(ListDirectory(".", depth=3))
    assert [entry.name for entry in deep] == ["README", "src", "src/pkg", "src/pkg/mod.py"]


async def test_exec_separates_streams_and_honours_cwd_and_env(env: EnvUnderTest) -> None:
    (env.workdir / "sub").mkdir()
    result = await env.ref.ask(
        ExecCommand(
            'echo "out $GREETING"; echo err >&2; pwd; exit 3',
            working_dir="sub",
            env_vars={"GREETING": "hello"},
        )
    )
    assert result.stdout.splitlines() == ["out hello", str(env.workdir / "sub")]
    assert result.stderr == "err\n"
    assert (result.exit_code, result.timed_out) == (3, False)
    assert result.duration_ms >= 0


async def test_sensitive_variables_are_not_visible(
    env: EnvUnderTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOO_API_KEY", "sk-secret")
    monkeypatch.setenv("Db_Password", "hunter2")
    result = await env.ref.ask(
        ExecCommand('echo "${FOO_API_KEY:-unset} ${Db_Password:-unset} ${HOME:+home}"')
    )
    assert result.stdout == "unset unset home\n"


async def test_timeout_kills_the_whole_group_and_keeps_partial_output(env: EnvUnderTest) -> None:
    with trio.fail_after(HANG_GUARD):
        result = await env.ref.ask(ExecCommand(STUBBORN, timeout_ms=500), timeout=None)
    assert result.timed_out
    assert result.stdout.startswith("started\n")
    assert "got-term" in result.stdout, "SIGTERM reached the group first"
    assert result.stdout.endswith(
        "[ERROR: Command timed out after 500ms. Partial output is shown above.\n"
        "You can retry with a longer timeout by setting the timeout_ms parameter.]"
    )
    pids = [int((env.workdir / name).read_text()) for name in ("leader.pid", "child.pid")]
    assert env.alive(pids) == []


async def test_aborted_command_leaves_no_process(env: EnvUnderTest) -> None:
    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(env.ref.ask, ExecCommand(STUBBORN, timeout_ms=60_000))
            while not _written(env.workdir, "leader.pid", "child.pid"):  # noqa: ASYNC110
                await trio.sleep(0.02)  # written remotely
            nursery.cancel_scope.cancel()
        pids = [int((env.workdir / name).read_text()) for name in ("leader.pid", "child.pid")]
        while env.alive(pids):  # noqa: ASYNC110 - the kill ladder runs after the caller left
            await trio.sleep(0.05)
    assert await env.ref.ask(ExecCommand("echo still serving")) is not None


async def test_grandchild_holding_stdout_does_not_hang_the_call(env: EnvUnderTest) -> None:
    with trio.fail_after(HANG_GUARD):
        result = await env.ref.ask(ExecCommand("sleep 300 & echo $! > bg.pid; echo done"))
    assert result.stdout == "done\n"
    assert result.exit_code == 0
    assert env.alive([int((env.workdir / "bg.pid").read_text())]) == []


async def test_huge_single_line_stays_under_the_capture_cap(env: EnvUnderTest) -> None:
    size = 10_000_000
    tracemalloc.start()
    try:
        result = await env.ref.ask(
            ExecCommand(f"head -c {size} /dev/zero | tr '\\0' x", timeout_ms=60_000)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0
    assert result.stdout_omitted == size - DEFAULT_CAPTURE_CAP
    assert result.stdout.count("x") == DEFAULT_CAPTURE_CAP
    assert "bytes of output omitted" in result.stdout
    assert peak < size / 2, f"peak {peak} bytes: the output was buffered whole"


async def test_output_deltas_arrive_while_the_command_runs(env: EnvUnderTest) -> None:
    sink = OutputSink()
    runtime = env.ref._cell.runtime
    sink_ref = await runtime.spawn(sink)
    finished = trio.Event()

    async def run() -> None:
        # Held until the test has seen the first delta (it slept 2 s): no race.
        held = "echo first; until [ -e go ]; do sleep 0.05; done; echo second"
        await env.ref.ask(ExecCommand(held, output_to=sink_ref))
        finished.set()

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            await sink.wait_for("first\n")
            assert not finished.is_set(), "the first delta came before the command ended"
            (env.workdir / "go").touch()
            await sink.wait_for("second\n")


async def test_grep_and_glob(env: EnvUnderTest) -> None:
    (env.workdir / "pkg").mkdir()
    (env.workdir / "pkg/a.py").write_text("import os\nVALUE = 1\n")
    (env.workdir / "pkg/b.py").write_text("value = 2\n")
    (env.workdir / "notes.md").write_text("VALUE in docs\n")
    os.utime(env.workdir / "pkg/a.py", (1_000_000_000, 1_000_000_000))
    found = await env.ref.ask(Grep("value", glob_filter="*.py", case_insensitive=True))
    assert found.matches == 2
    assert sorted(found.text.splitlines()) == [
        f"{env.workdir}/pkg/a.py:2:VALUE = 1",
        f"{env.workdir}/pkg/b.py:1:value = 2",
    ]
    limited = await env.ref.ask(Grep("VALUE|value", max_results=1))
    assert (limited.matches, limited.truncated) == (1, True)
    with pytest.raises(InvalidRequest):
        await env.ref.ask(Grep("(unclosed"))
    with pytest.raises(FileNotFound):
        await env.ref.ask(Grep("x", path="nowhere"))
    files = await env.ref.ask(Glob("**/*.py"))
    assert files.paths == [str(env.workdir / "pkg/b.py"), str(env.workdir / "pkg/a.py")]
    assert (await env.ref.ask(Glob("*.md"))).paths == [str(env.workdir / "notes.md")]


async def test_describe_reports_the_working_directory(env: EnvUnderTest) -> None:
    info = await env.ref.ask(Describe())
    assert info.working_directory == str(env.workdir)
    assert info.platform == "linux"
    assert info.os_version


async def test_forty_commands_at_once(env: EnvUnderTest) -> None:
    results: dict[int, str] = {}

    async def run(n: int) -> None:
        # Generous: on a small machine each SSH login runs the user's startup files.
        command = ExecCommand(f"sleep 0.2; echo {n}", timeout_ms=120_000)
        results[n] = (await env.ref.ask(command, timeout=None)).stdout

    with trio.fail_after(HANG_GUARD * 3):
        async with trio.open_nursery() as nursery:
            for n in range(40):
                nursery.start_soon(run, n)
    assert results == {n: f"{n}\n" for n in range(40)}


async def test_a_returned_call_leaves_not_even_its_shell_running(env: EnvUnderTest) -> None:
    """The shell that ran the command (``$$``: over SSH, the wrapper sshd started) is
    gone when the call returns. Its output ends while it exits, a moment before it
    is reaped, so a call that returned on the end of output alone raced it."""
    still_running: list[int] = []
    for _ in range(SHELL_EXIT_ROUNDS):
        with trio.fail_after(HANG_GUARD):
            # Its own generous timeout: the default 10 s is a model's, not a loaded host's.
            result = await env.ref.ask(ExecCommand("echo $$", timeout_ms=120_000))
        still_running += env.alive([int(result.stdout)])
    assert still_running == []
