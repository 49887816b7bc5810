"""No window between the check and the use: a path is resolved and judged once,
then used exactly, while a thread keeps swapping one of its directories for a
symbolic link to a directory outside. Not one byte outside may change, with the
kernel's ``openat2`` and with the component walk used where it is missing."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import pytest

from actors.kernel import Rejection
from actors.policy.presets import policy_preset
from actors.session.path_checks import PathJudge
from environments import nofollow
from environments.errors import LinkInPath
from protocol.environment import (
    DeleteFile,
    ListDirectory,
    PathGuard,
    ReadFile,
    StatPath,
    WriteFile,
)
from tests.environments.conftest import EnvUnderTest

ROUNDS = 300
SSH_ROUNDS = 15
_AT_FDCWD = -100


@pytest.fixture(params=["openat2", "walk"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``walk``: as on a kernel without openat2 (before 5.6, or a seccomp filter)."""
    if request.param == "walk":
        monkeypatch.setattr(nofollow, "_openat2", lambda *_: None)
    return str(request.param)


class Flipper:
    """Swaps ``work/d`` between the real directory and a link to ``outside``, each
    swap one atomic exchange (``renameat2(RENAME_EXCHANGE)``): ``d`` is always one
    or the other."""

    def __init__(self, directory: Path, outside: Path) -> None:
        self.directory = os.fsencode(directory)
        self.link = os.fsencode(directory.with_name("d.link"))
        os.symlink(outside, self.link)
        self.stop = threading.Event()
        self.flips = 0
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.thread = threading.Thread(target=self.run, daemon=True)

    def exchange(self) -> None:
        if self.libc.renameat2(_AT_FDCWD, self.directory, _AT_FDCWD, self.link, 2) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    def run(self) -> None:
        while not self.stop.is_set():
            self.exchange()  # d -> outside
            self.exchange()  # d is the real directory again
            self.flips += 1

    def __enter__(self) -> Flipper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _race_skip(kind: str, params: dict[str, object]) -> str | None:
    """Why the race test skips ``kind`` (decided before the environment is built)."""
    if kind != "local" and params.get("kernel") == "walk":
        return "the host's own kernel decides there (its openat2, or the walk)"
    if kind == "docker":
        return (
            "the test image has no python3: a guarded path is checked just before use "
            "there (as on an SSH host without python3), which a race can beat"
        )
    return None


@pytest.mark.env_skip.with_args(_race_skip)
async def test_a_symlink_swapped_in_after_the_check_is_never_followed(
    env: EnvUnderTest, kernel: str
) -> None:
    rounds = ROUNDS if env.kind == "local" else SSH_ROUNDS  # each SSH use is a remote run
    outside = env.workdir / "elsewhere"  # only reachable through the swapped link
    directory = env.workdir / "d"
    for name in ("elsewhere/f", "elsewhere/g", "d/f", "d/g"):  # owned by the login
        where = "outside" if name.startswith("elsewhere") else "inside"
        await env.ref.ask(WriteFile(name, f"{where}\n"))
    judge = PathJudge(env.ref, str(env.workdir))
    verdict = await judge.judge(policy_preset("interactive"), ["d/f", "d/g", "d"], writes=True)
    assert verdict.refusal is None
    f, g, d = (verdict.resolved[p] for p in ("d/f", "d/g", "d"))
    assert f == str(directory / "f")
    guard = PathGuard()
    refused = done = 0
    with Flipper(directory, outside) as flipper:
        index = 0
        # At least ROUNDS rounds, and on until the swap was met (a refusal) and
        # some uses went through: the race is run, not assumed.
        while index < rounds or (refused == 0 and index < 10 * rounds):
            index += 1
            for request in (
                WriteFile(f, f"inside {index}\n", guard=guard),
                ReadFile(f, guard=guard),
                StatPath(f, guard=guard),
                ListDirectory(d, guard=guard),
                DeleteFile(g, guard=guard),
                WriteFile(g, "inside\n", guard=guard),
            ):
                try:
                    answer = await env.ref.ask(request)
                except Rejection:
                    refused += 1
                else:
                    done += 1
                    if isinstance(request, ReadFile):
                        assert "outside" not in answer.text  # type: ignore[attr-defined]
    assert flipper.flips > 0 and done > 0 and refused > 0
    assert sorted(p.name for p in outside.iterdir()) == ["f", "g"]
    assert (outside / "f").read_text() == "outside\n"
    assert (outside / "g").read_text() == "outside\n"


@pytest.mark.env_skip.with_args(lambda kind, _: None if kind == "local" else "local guarded opens")
async def test_a_judged_path_with_a_link_in_it_is_refused(
    env: EnvUnderTest, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("outside\n")
    (env.workdir / "d").symlink_to(outside)
    with pytest.raises(LinkInPath):
        await env.ref.ask(WriteFile(str(env.workdir / "d" / "f"), "x", guard=PathGuard()))
    with pytest.raises(LinkInPath):
        await env.ref.ask(ReadFile(str(env.workdir / "d" / "f"), guard=PathGuard()))
    assert (outside / "f").read_text() == "outside\n"
