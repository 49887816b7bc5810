"""Every OS refusal is a typed error the caller (or the model) reads, and the
environment keeps serving: the requests the fuzzer found took it down for good."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.kernel import Rejection, Runtime
from environments.local import LocalEnvironment
from protocol.environment import (
    ExecCommand,
    FileExists,
    Glob,
    Grep,
    ListDirectory,
    ReadFile,
    StatPath,
    WriteFile,
)

BAD_REQUESTS = [
    ("write_nul_path", WriteFile("a\x00b.txt", "x"), "invalid_path"),
    ("read_nul_path", ReadFile("a\x00b.txt"), "invalid_path"),
    ("exec_nul_working_dir", ExecCommand("true", working_dir="d\x00"), "invalid_path"),
    ("exec_nul_command", ExecCommand("echo \x00"), "invalid_request"),
    ("exec_nul_variable", ExecCommand("true", env_vars={"A": "\x00"}), "invalid_request"),
    ("stat_nul_path", StatPath("\x00"), "invalid_path"),
    ("exists_nul_path", FileExists("\x00"), "invalid_path"),
    ("grep_nul_pattern", Grep("a\x00"), "invalid_request"),
    ("write_long_name", WriteFile("n" * 300 + ".txt", "x"), "invalid_path"),
    ("read_long_name", ReadFile("n" * 300), "invalid_path"),
    ("exec_long_working_dir", ExecCommand("true", working_dir="d" * 300), "os_error"),
    ("write_parent_is_a_file", WriteFile("file.txt/child.txt", "x"), "not_a_directory"),
    ("read_parent_is_a_file", ReadFile("file.txt/child.txt"), "not_a_directory"),
    ("list_parent_is_a_file", ListDirectory("file.txt/sub"), "not_a_directory"),
    ("glob_long_root", Glob("*", path="g" * 300), "invalid_path"),
]


@pytest.mark.parametrize(("request_", "code"), [c[1:] for c in BAD_REQUESTS],
                         ids=[c[0] for c in BAD_REQUESTS])  # fmt: skip
async def test_an_os_refusal_is_typed_and_the_environment_still_answers(
    tmp_path: Path, runtime: Runtime, request_: object, code: str
) -> None:
    (tmp_path / "file.txt").write_text("hello\n")
    ref = await runtime.spawn(LocalEnvironment(tmp_path), name="environments/local")
    with pytest.raises(Rejection) as refused:
        await ref.ask(request_)
    assert refused.value.code == code, refused.value
    assert str(refused.value)
    assert ref.alive
    assert (await ref.ask(ReadFile("file.txt"))).text == "1 | hello"
    assert (await ref.ask(ExecCommand("echo ok"))).stdout == "ok\n"
    assert not runtime.restarts  # refused, not failed and restarted
