"""Troupe's apply_patch against the real codex, on generated patches.

Each case (``tests/tools/patch_generator.py``) is a small tree and a patch. The tree
is laid out in one directory and patched by codex's own ``apply_patch`` (the
binary from npm, see ``tests/tools/codex_reference.py``); then laid out again in
the same directory and patched by Troupe's engine. The two must agree byte for
byte: the resulting tree, success or failure, and the text (codex's stdout on
success, its stderr on failure). Because both run in the same directory, the
absolute paths in error messages are compared as they are.

The cases come from a fixed seed (the same every run) and from a fresh seed drawn
for this run and printed, so over time the generator explores more. To replay a
run: ``TROUPE_PATCH_SEED=<seed> pytest tests/tools/test_apply_patch_differential.py``.

The fixed cases also go through the ``apply_patch`` tool, on a local environment
actor and over a real SSH environment (the test sshd, logged into as root so the
same directory serves), which must leave the same trees and say the same thing.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import msgspec
import pytest
import trio

from actors.kernel import ActorRef, Runtime
from actors.tools.apply_patch import LocalPatchFiles, PatchApplyError, PatchParseError, apply_patch
from actors.tools.core.context import ToolContext
from actors.tools.core.patch import APPLY_PATCH
from actors.tools.registry import ToolRegistry
from environments.local import LocalEnvironment
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost
from protocol.llm import ToolCall
from tests.environments.sshd import SSHDUnavailable, SSHServer, start_sshd
from tests.tools.codex_reference import CodexUnavailable, install, run_codex_apply_patch
from tests.tools.patch_generator import PatchCase, generate_cases

FIXED_SEED = 14_300
FIXED_CASES = 300
FRESH_CASES = 200
SEED_VARIABLE = "TROUPE_PATCH_SEED"
SHOWN_MISMATCHES = 5


def fresh_seed() -> int:
    """This run's extra seed: ``$TROUPE_PATCH_SEED`` to replay one, else random."""
    chosen = os.environ.get(SEED_VARIABLE)
    return int(chosen) if chosen else secrets.randbelow(10**9)


class Outcome(msgspec.Struct, frozen=True):
    """What one side did: exit status, what it printed, and the tree it left."""

    exit_code: int
    stdout: str
    stderr: str
    tree: dict[str, Entry]


@pytest.fixture(scope="session")
def codex_binary() -> Path:
    try:
        return install()
    except CodexUnavailable as reason:
        pytest.skip(f"codex apply_patch reference unavailable: {reason}")


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    """One directory for every case (created fresh per case), plus a home for codex."""
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="troupe-patch-diff-")))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def lay_out(root: Path, case: PatchCase) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir()
    for directory in case.directories:
        (root / directory).mkdir(parents=True, exist_ok=True)
    for path, data in case.files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    for path in case.executables:
        (root / path).chmod(0o755)
    for path, target in case.symlinks:
        (root / path).symlink_to(target)


Entry = tuple[str, int, bytes]


def tree_state(root: Path) -> dict[str, Entry]:
    """Everything under ``root`` by relative path: directories and files with their
    permission bits (files with their bytes), symbolic links with their target."""
    state: dict[str, Entry] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(directory, name)
            key = str(path.relative_to(root))
            if path.is_symlink():
                state[key] = ("link", 0, os.readlink(path).encode())
            elif path.is_dir():
                state[key] = ("directory", path.stat().st_mode & 0o7777, b"")
            else:
                state[key] = ("file", path.stat().st_mode & 0o7777, path.read_bytes())
    return state


def codex_outcome(binary: Path, case: PatchCase, base: Path) -> Outcome:
    root = base / "work"
    lay_out(root, case)
    done = run_codex_apply_patch(binary, case.patch, root, base)
    return Outcome(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        tree_state(root),
    )


def with_references(
    cases: list[PatchCase], binary: Path, base: Path
) -> list[tuple[PatchCase, Outcome]]:
    """Each case with what codex made of it (codex runs one case at a time, in
    ``base/work``, the directory the other side will use too)."""
    return [(case, codex_outcome(binary, case, base)) for case in cases]


@pytest.fixture(scope="module")
def fixed_references(codex_binary: Path, workspace: Path) -> list[tuple[PatchCase, Outcome]]:
    """The fixed-seed cases and codex's outcomes, shared by the local and SSH runs."""
    return with_references(generate_cases(FIXED_SEED, FIXED_CASES), codex_binary, workspace)


def printed(succeeded: bool, text: str) -> tuple[int, str, str]:
    """A Troupe result as codex's CLI would show it: summary on stdout and exit 0,
    or the message and a newline on stderr and exit 1."""
    return (0, text, "") if succeeded else (1, "", text + "\n")


async def troupe_outcome(case: PatchCase, base: Path) -> Outcome:
    root = base / "work"
    lay_out(root, case)
    try:
        result = await apply_patch(case.patch, LocalPatchFiles(root))
    except (PatchParseError, PatchApplyError) as error:
        shown = printed(False, str(error))
    else:
        shown = printed(True, result.summary)
    return Outcome(*shown, tree_state(root))


def describe(case: PatchCase, codex: Outcome, other: Outcome, side: str) -> str:
    lines = [f"--- {case.label}: codex and {side} differ", f"patch: {case.patch!r}"]
    lines.append(f"files: {dict(case.files)!r} directories: {case.directories!r}")
    lines.append(f"symlinks: {case.symlinks!r} executables: {case.executables!r}")
    if codex.tree == other.tree:
        lines.append("trees: equal")
    for path in sorted(set(codex.tree) | set(other.tree)):
        ours, theirs = other.tree.get(path, "absent"), codex.tree.get(path, "absent")
        if ours != theirs:
            lines.append(f"  {path}: codex {theirs!r} / {side} {ours!r}")
    for field in ("exit_code", "stdout", "stderr"):
        theirs, ours = getattr(codex, field), getattr(other, field)
        if theirs != ours:
            lines.append(f"  {field}: codex {theirs!r} / {side} {ours!r}")
    return "\n".join(lines)


async def compare_all(
    references: list[tuple[PatchCase, Outcome]],
    side: str,
    run_side: Callable[[PatchCase], Awaitable[Outcome]],
) -> list[str]:
    """Run every case through ``run_side``; describe each one where the outcome is
    not codex's."""
    mismatches = []
    for case, reference in references:
        other = await run_side(case)
        if other != reference:
            mismatches.append(describe(case, reference, other, side))
    return mismatches


def applied_by_codex(references: list[tuple[PatchCase, Outcome]]) -> int:
    return sum(reference.exit_code == 0 for _, reference in references)


def verdict(mismatches: list[str], total: int, seed: int) -> str:
    shown = "\n".join(mismatches[:SHOWN_MISMATCHES])
    return (
        f"{len(mismatches)} of {total} cases differ from codex (replay with "
        f"{SEED_VARIABLE}={seed}); the first {min(len(mismatches), SHOWN_MISMATCHES)}:\n{shown}"
    )


async def assert_troupe_matches_codex(
    references: list[tuple[PatchCase, Outcome]],
    seed: int,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mismatches = await compare_all(
        references, "troupe", lambda case: troupe_outcome(case, workspace)
    )
    count, applied = len(references), applied_by_codex(references)
    with capsys.disabled():
        print(
            f"\napply_patch vs codex: seed {seed}, {count} cases, {applied} applied by codex, "
            f"{count - applied} rejected, {len(mismatches)} differences"
        )
    assert not mismatches, verdict(mismatches, count, seed)
    # The generator must keep exercising both outcomes, or the comparison is hollow.
    assert count // 4 < applied < count - count // 4


async def test_fixed_seed_cases_apply_exactly_as_in_codex(
    fixed_references: list[tuple[PatchCase, Outcome]],
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await assert_troupe_matches_codex(fixed_references, FIXED_SEED, workspace, capsys)


async def test_fresh_seed_cases_apply_exactly_as_in_codex(
    codex_binary: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = fresh_seed()
    references = await trio.to_thread.run_sync(
        with_references, generate_cases(seed, FRESH_CASES), codex_binary, workspace
    )
    await assert_troupe_matches_codex(references, seed, workspace, capsys)


@pytest.fixture(scope="module")
def sshd_server() -> Iterator[SSHServer]:
    directory = Path(tempfile.mkdtemp(prefix="troupe-sshd-"))
    try:
        process, server = start_sshd(directory)
    except SSHDUnavailable as reason:
        shutil.rmtree(directory, ignore_errors=True)
        pytest.skip(f"no test sshd: {reason}")
    try:
        yield server
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(directory, ignore_errors=True)


async def ssh_environment(runtime: Runtime, server: SSHServer, root: Path) -> ActorRef:
    bridge = await runtime.spawn(SSHBridge(), name="environments/ssh")
    request = AddSSHHost(
        target=f"ssh://root@127.0.0.1:{server.port}",
        name="patch-diff",
        working_dir=str(root),
        known_hosts=str(server.known_hosts),
        client_keys=[str(server.client_key)],
    )
    return await bridge.ask(request)


async def tool_outcomes_match_codex(
    references: list[tuple[PatchCase, Outcome]], environment: ActorRef, root: Path, side: str
) -> list[str]:
    """Run each case through the ``apply_patch`` tool on ``environment`` (whose
    working directory is ``root``); describe the cases that differ from codex."""
    tools = ToolRegistry([APPLY_PATCH])
    context = ToolContext(environment, str(root))

    async def through_tool(case: PatchCase) -> Outcome:
        lay_out(root, case)
        call = ToolCall("call-1", "apply_patch", {"patch": case.patch})
        outcome = await tools.run(call, context)
        return Outcome(*printed(not outcome.is_error, outcome.output), tree_state(root))

    return await compare_all(references, side, through_tool)


async def test_the_apply_patch_tool_on_a_local_environment_matches_codex(
    fixed_references: list[tuple[PatchCase, Outcome]], workspace: Path
) -> None:
    root = workspace / "work"
    root.mkdir(exist_ok=True)
    async with Runtime(grace=2.0) as runtime:
        environment = await runtime.spawn(LocalEnvironment(root))
        mismatches = await tool_outcomes_match_codex(fixed_references, environment, root, "local")
    assert not mismatches, verdict(mismatches, len(fixed_references), FIXED_SEED)


async def test_the_apply_patch_tool_over_ssh_matches_codex(
    fixed_references: list[tuple[PatchCase, Outcome]], workspace: Path, sshd_server: SSHServer
) -> None:
    root = workspace / "work"
    root.mkdir(exist_ok=True)
    async with Runtime(grace=2.0) as runtime:
        environment = await ssh_environment(runtime, sshd_server, root)
        mismatches = await tool_outcomes_match_codex(fixed_references, environment, root, "ssh")
    assert not mismatches, verdict(mismatches, len(fixed_references), FIXED_SEED)


@pytest.mark.parametrize("destination", ["same.txt", "./same.txt"])
async def test_moving_a_file_onto_itself_is_the_one_deliberate_difference(
    destination: str, codex_binary: Path, workspace: Path
) -> None:
    """codex writes the moved file, then deletes the source, which is the same file:
    the edit and the file are lost. Troupe keeps the edited file (docs/decisions.md).
    The generator never moves a file onto itself; this pins the difference."""
    patch = (
        "*** Begin Patch\n*** Update File: same.txt\n"
        f"*** Move to: {destination}\n@@\n-old\n+new\n*** End Patch\n"
    )
    case = PatchCase(0, 0, (("same.txt", b"old\n"),), (), patch)
    codex = await trio.to_thread.run_sync(codex_outcome, codex_binary, case, workspace)
    troupe = await troupe_outcome(case, workspace)
    assert codex.tree == {}
    assert list(troupe.tree) == ["same.txt"]
    assert troupe.tree["same.txt"][2] == b"new\n"
    assert (troupe.exit_code, troupe.stdout, troupe.stderr) == (
        codex.exit_code,
        codex.stdout,
        codex.stderr,
    )


def test_without_npm_codex_is_unavailable_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one reason the differential tests may skip: npm cannot be had."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm on it
    with pytest.raises(CodexUnavailable, match="npm is not installed"):
        install(tmp_path / "cache")
