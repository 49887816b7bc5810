"""LocalEnvironment details that the shared suite does not cover."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from actors.kernel import Runtime
from environments.envvars import EnvPolicy, command_environment
from environments.local import LocalEnvironment
from protocol.environment import ExecCommand, Grep


@pytest.mark.parametrize("use_ripgrep", [False, True], ids=["python", "ripgrep"])
async def test_grep_gives_the_same_answer_with_and_without_ripgrep(
    tmp_path: Path, runtime: Runtime, use_ripgrep: bool
) -> None:
    if use_ripgrep and shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed (apt-get install ripgrep; .ci/run does)")
    (tmp_path / "a.txt").write_text("needle one\nhay\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/b.log").write_text("hay\nNeedle two\n")
    ref = await runtime.spawn(LocalEnvironment(tmp_path, use_ripgrep=use_ripgrep))
    found = await ref.ask(Grep("needle", case_insensitive=True))
    assert sorted(found.text.splitlines()) == [
        f"{tmp_path}/a.txt:1:needle one",
        f"{tmp_path}/sub/b.log:2:Needle two",
    ]
    only_logs = await ref.ask(Grep("needle", glob_filter="*.log", case_insensitive=True))
    assert only_logs.text == f"{tmp_path}/sub/b.log:2:Needle two"


def test_env_policies() -> None:
    inherited = {"PATH": "/bin", "HOME": "/root", "LC_ALL": "C", "EDITOR": "vi", "gh_token": "t"}
    assert command_environment(EnvPolicy(inherit="none"), inherited) == {}
    core = command_environment(EnvPolicy(inherit="core"), inherited)
    assert core == {"PATH": "/bin", "HOME": "/root", "LC_ALL": "C"}
    everything = command_environment(EnvPolicy(), inherited, {"EXTRA": "1"})
    assert everything == {
        "PATH": "/bin",
        "HOME": "/root",
        "LC_ALL": "C",
        "EDITOR": "vi",
        "EXTRA": "1",
    }
    configured = EnvPolicy(inherit="none", extra={"CI": "true"})
    assert command_environment(configured, inherited) == {"CI": "true"}


async def test_timeout_is_capped_and_defaulted(tmp_path: Path, runtime: Runtime) -> None:
    ref = await runtime.spawn(LocalEnvironment(tmp_path))
    result = await ref.ask(ExecCommand("echo quick", timeout_ms=10**9))
    assert (result.stdout, result.timed_out) == ("quick\n", False)
