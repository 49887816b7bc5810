"""docs/environment-kinds.md's toy kind, planted as the page shows its two files
and registered as the page says: the server adds an environment of it by name
(the registry checks its spec, starts it, lists it under its kind) and commands,
files, search, a persistent terminal and a timeout's group kill work through it,
all from the CommandEnvironment base over the toy's run, stream and upload."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from actors.server.environments import Environments
from environments.builtin_kinds import builtin_kinds
from environments.kinds import Kinds, SpecRefused
from protocol.environment import (
    CloseTerminal,
    ExecCommand,
    Glob,
    Grep,
    ListDirectory,
    ReadFile,
    RunInTerminal,
    WriteFile,
)
from tests.cli.conftest import REPO
from tests.docs_files import plant
from tests.environments.helpers import alive
from tests.waiting import HANG_GUARD, TEST_KILL_GRACE, wait_until

PAGE = REPO / "docs" / "environment-kinds.md"


@pytest.fixture
def toykind(tmp_path: Path) -> Iterator[object]:
    """The page's files under a directory of their own, importable as ``toykind``."""
    root = tmp_path / "planted"
    assert sorted(plant(PAGE, root)) == ["toykind/environment.py", "toykind/kind.py"]
    sys.path.insert(0, str(root))
    try:
        import toykind.kind  # type: ignore[import-not-found]

        yield toykind.kind
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.startswith("toykind")]:
            del sys.modules[name]


async def test_the_toy_kind_of_the_page(toykind: object, tmp_path: Path) -> None:
    kind = toykind.KIND  # type: ignore[attr-defined]
    spec_type = toykind.ProcessSpec  # type: ignore[attr-defined]
    kinds = Kinds([*builtin_kinds(), kind])
    root = tmp_path / "root"
    root.mkdir()
    async with Runtime(grace=2.0, kill_grace=TEST_KILL_GRACE) as runtime:
        environments = Environments(runtime, tmp_path, kinds=kinds)
        with pytest.raises(SpecRefused, match="absolute"):
            await environments.add("toy", spec_type(root="relative"))
        summary = await environments.add("toy", spec_type(root=str(root)))
        assert (summary.address, summary.kind) == ("/environments/process/toy", "process")
        assert {s.address: s.kind for s in environments.summaries()}[summary.address] == "process"
        env = environments.resolve("toy")
        with trio.fail_after(HANG_GUARD):
            done = await env.ask(ExecCommand("echo $GREETING; pwd; echo oops >&2; exit 3",
                                             env_vars={"GREETING": "hi"}))  # fmt: skip
            assert (done.stdout, done.stderr, done.exit_code) == (f"hi\n{root}\n", "oops\n", 3)
            written = await env.ask(WriteFile("src/a.txt", "alpha\nbeta\n"))
            assert written.bytes_written == 11
            assert (root / "src" / "a.txt").read_text() == "alpha\nbeta\n"
            read = await env.ask(ReadFile("src/a.txt", exact=True))
            assert read.text == "alpha\nbeta\n"
            listed = await env.ask(ListDirectory(depth=2))
            assert [entry.name for entry in listed] == ["src", "src/a.txt"]
            found = await env.ask(Grep("bet", path="src"))
            assert found.matches == 1 and "a.txt:2:beta" in found.text
            assert (await env.ask(Glob("**/*.txt"))).paths == [str(root / "src" / "a.txt")]

            first = await env.ask(RunInTerminal("cd src && export KEPT=yes", "t"))
            assert first.working_dir == str(root / "src")
            second = await env.ask(RunInTerminal("echo $KEPT; echo $$", "t"))
            kept, shell = second.output.split()
            assert kept == "yes" and alive([int(shell)]) == [int(shell)]
            assert await env.ask(CloseTerminal("t")) is True
            await wait_until(lambda: not alive([int(shell)]), what="the terminal's shell to end")

            slow = await env.ask(
                ExecCommand("sleep 300 & echo $! > bg.pid; sleep 300", timeout_ms=500)
            )
            assert slow.timed_out
            background = int((root / "bg.pid").read_text())
            await wait_until(lambda: not alive([background]), what="the timed-out group to end")
        await environments.remove("toy")
        assert "/environments/process/toy" not in runtime.addresses()
