"""Workspace snapshots (actors/workspace) against real environments: this machine
and the real sshd logged into as root and as an unprivileged user. Changes are
made the ways a session makes them (a file write request, shell commands run by
the environment) and checked from this host's side, byte for byte."""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.kernel import Runtime
from actors.workspace import (
    SnapshotError,
    materialize_snapshot,
    restore_snapshot,
    take_snapshot,
)
from environments.docker.environment import DockerEnvironment
from environments.local import LocalEnvironment
from protocol.environment import ExecCommand, WriteFile
from tests.environments import dockerd
from tests.environments.conftest import DockerForTests, EnvUnderTest, owned_directory

KINDS = ["local", "ssh-root", "ssh-user"]
CAP = 1000

Tree = dict[str, tuple[str, bytes, bool]]
"""path -> (kind, bytes or link target, executable)."""


def tree_of(root: Path, skip: tuple[str, ...] = (".git",)) -> Tree:
    """Everything under ``root`` as this host sees it, links not followed."""
    found: Tree = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(directory, d), root) not in skip]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(directory, d))]:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path).encode(), False)
            else:
                executable = bool(info.st_mode & stat.S_IXUSR)
                found[relative] = ("file", Path(path).read_bytes(), executable)
    return found


def digest_of(directory: Path) -> str:
    """Names, modes and bytes of everything under ``directory`` (a user's .git)."""
    sha = hashlib.sha256()
    for path in sorted(directory.rglob("*")):
        info = path.lstat()
        sha.update(f"{path.relative_to(directory)}:{info.st_mode}:".encode())
        if path.is_file() and not path.is_symlink():
            sha.update(path.read_bytes())
    return sha.hexdigest()


async def sh(env: EnvUnderTest, command: str) -> str:
    result = await env.ref.ask(ExecCommand(command, timeout_ms=30_000), timeout=60)
    assert result.exit_code == 0, (command, result.stdout, result.stderr)
    return result.stdout


@pytest.fixture
def shadow_base(env: EnvUnderTest) -> Iterator[str]:
    """A shadow directory the environment's login may write, removed afterwards."""
    user = "troupe-test" if env.kind == "ssh-user" else "root"
    directory = owned_directory(user)
    yield str(directory)
    shutil.rmtree(directory, ignore_errors=True)


async def make_tree(env: EnvUnderTest) -> None:
    """A tree with what a snapshot must keep and what it must leave out."""
    await sh(
        env,
        "printf 'one\\r\\ntwo\\r\\n' > crlf.txt; printf 'a\\nb\\nc\\n' > sed.txt; "
        "printf 'bye' > gone.txt; printf 'moving' > moved.txt; printf 'no final newline' > nonl; "
        "mkdir -p deep/er; printf 'x' > deep/er/file; printf '#!/bin/sh\\necho hi\\n' > run.sh; "
        "chmod +x run.sh; ln -s crlf.txt link; printf '*.log\\nbuild/\\n' > .gitignore; "
        "printf 'old log' > ignored.log; mkdir build; printf 'artifact' > build/out; "
        f"head -c {CAP * 2} /dev/zero > big.bin; printf '\\0\\1\\2\\377' > binary.dat",
    )


async def change_tree(env: EnvUnderTest) -> None:
    """Every kind of change a session makes: its own writes and shell commands."""
    await env.ref.ask(WriteFile(str(env.workdir / "crlf.txt"), "rewritten\n"))
    await env.ref.ask(WriteFile(str(env.workdir / "created" / "by_write.txt"), "new\n"))
    await sh(
        env,
        "sed -i 's/b/B/' sed.txt; rm gone.txt; mv moved.txt moved-here.txt; "
        "seq 1 50 > generated.txt; chmod -x run.sh; chmod +x nonl; rm link; ln -s nonl link; "
        "printf 'new log' > ignored.log; printf 'more' >> build/out; "
        f"head -c {CAP * 3} /dev/zero > big.bin; rm -r deep; printf 'z' > binary.dat",
    )


@pytest.mark.parametrize("env", KINDS, indirect=True)
async def test_restore_brings_back_every_byte(env: EnvUnderTest, shadow_base: str) -> None:
    await make_tree(env)
    before = tree_of(env.workdir)
    snapshot = await take_snapshot(env.ref, shadow_base=shadow_base, max_file_bytes=CAP)
    assert [(s.path, s.reason) for s in snapshot.skipped] == [("big.bin", "large")]
    assert snapshot.files == len(before) - 3  # not big.bin, ignored.log, build/out
    await change_tree(env)
    changed = tree_of(env.workdir)

    report = await restore_snapshot(
        env.ref, snapshot.commit, shadow_base=shadow_base, max_file_bytes=CAP
    )

    after = tree_of(env.workdir)
    kept = ("ignored.log", "build/out", "big.bin")
    for path in kept:  # ignored and over-cap files are left as they are now
        assert after.pop(path) == changed[path]
    assert after == {path: entry for path, entry in before.items() if path not in kept}
    assert sorted(report.deleted) == ["created/by_write.txt", "generated.txt", "moved-here.txt"]
    assert sorted(report.recreated) == ["deep/er/file", "gone.txt", "moved.txt"]
    assert sorted(report.changed) == [
        "binary.dat", "crlf.txt", "link", "nonl", "run.sh", "sed.txt"
    ]  # fmt: skip
    assert not (env.workdir / "created").exists()  # a directory emptied by the restore goes

    # The restore took a snapshot first: restoring that one undoes it.
    await restore_snapshot(env.ref, report.before, shadow_base=shadow_base, max_file_bytes=CAP)
    assert tree_of(env.workdir) == changed


@pytest.mark.parametrize("env", KINDS, indirect=True)
async def test_snapshots_are_incremental_and_materialize(
    env: EnvUnderTest, shadow_base: str, tmp_path: Path
) -> None:
    await make_tree(env)
    first = await take_snapshot(env.ref, shadow_base=shadow_base, max_file_bytes=CAP)
    again = await take_snapshot(env.ref, shadow_base=shadow_base, max_file_bytes=CAP)
    assert again.commit == first.commit  # nothing changed: the same snapshot
    await sh(env, "printf 'changed' > sed.txt")
    third = await take_snapshot(env.ref, shadow_base=shadow_base, max_file_bytes=CAP)
    assert third.commit != first.commit

    user = "root" if env.kind != "ssh-user" else "troupe-test"
    parent = owned_directory(user)
    try:
        dest = parent / "fork"
        made = await materialize_snapshot(env.ref, first.commit, str(dest), shadow=first.shadow)
        assert made.files == first.files
        expected = {
            path: entry
            for path, entry in tree_of(env.workdir).items()
            if path not in ("ignored.log", "build/out", "big.bin", "sed.txt")
        }
        copied = tree_of(dest)
        assert copied.pop("sed.txt")[1] == b"a\nb\nc\n"
        assert copied == expected
        with pytest.raises(SnapshotError) as refused:
            await materialize_snapshot(env.ref, first.commit, str(dest), shadow=first.shadow)
        assert refused.value.reason == "dest"
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    with pytest.raises(SnapshotError) as unknown:
        await restore_snapshot(env.ref, "0" * 40, shadow_base=shadow_base)
    assert unknown.value.reason == "unknown"
    with pytest.raises(SnapshotError):
        await restore_snapshot(env.ref, "HEAD; touch pwned", shadow_base=shadow_base)


HOSTILE_CONFIG = """[core]
\tfsmonitor = "touch {marks}/fsmonitor #"
\thooksPath = {marks}/hooks
[filter "evil"]
\tclean = touch {marks}/clean
\tsmudge = touch {marks}/smudge
\tprocess = touch {marks}/process
[diff "evil"]
\ttextconv = touch {marks}/textconv
"""


@pytest.mark.parametrize("env", ["local", "ssh-user"], indirect=True)
async def test_a_hostile_repository_runs_nothing(
    env: EnvUnderTest, shadow_base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository planted to run code (fsmonitor, hooks, filters named by its own
    .gitattributes, end-of-line and ident conversions) gets none of it run, and its
    files round-trip byte for byte; the user's .git is left exactly as it was. (The
    plants go in after the setup's own ``git add``, which would run them.)"""
    user = "root" if env.kind == "local" else "troupe-test"
    marks = owned_directory(user)
    try:
        await sh(env, "git init -q . && git config user.email a@b && git config user.name a")
        await sh(
            env,
            "printf 'lf\\nonly $Id$\\n' > plain.txt; git add plain.txt; printf "
            "'* filter=evil diff=evil text eol=crlf ident working-tree-encoding=UTF-16\\n'"
            " > .gitattributes",
        )
        await sh(env, f"mkdir -p {marks}/hooks")
        for hook in ("pre-commit", "post-commit", "post-checkout", "post-index-change"):
            await sh(
                env,
                f"printf '#!/bin/sh\\ntouch {marks}/{hook}\\n' > .git/hooks/{hook} && "
                f"chmod +x .git/hooks/{hook} && cp .git/hooks/{hook} {marks}/hooks/",
            )
        await sh(env, f"printf '%s' '{HOSTILE_CONFIG.format(marks=marks)}' >> .git/config")
        if env.kind == "local":  # git's own variables in Troupe's environment are dropped too
            hostile = marks / "global"
            hostile.write_text(HOSTILE_CONFIG.format(marks=marks))
            monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(hostile))
            monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='touch {marks}/env'")
            monkeypatch.setenv("GIT_INDEX_FILE", str(env.workdir / ".git" / "index"))
        user_git = digest_of(env.workdir / ".git")
        before = tree_of(env.workdir)

        snapshot = await take_snapshot(env.ref, shadow_base=shadow_base)
        await sh(env, "printf 'changed\\r\\n' > plain.txt; rm .gitattributes")
        await restore_snapshot(env.ref, snapshot.commit, shadow_base=shadow_base)
        made = Path(shadow_base) / "made"
        await materialize_snapshot(env.ref, snapshot.commit, str(made), shadow_base=shadow_base)

        assert (
            sorted(p.name for p in marks.iterdir())
            == ["global", "hooks"][(0 if env.kind == "local" else 1) :]
        )
        assert tree_of(env.workdir) == before
        assert tree_of(made) == before
        assert digest_of(env.workdir / ".git") == user_git
    finally:
        shutil.rmtree(marks, ignore_errors=True)


@pytest.mark.parametrize("env", ["local", "ssh-user"], indirect=True)
async def test_links_are_never_followed(env: EnvUnderTest, shadow_base: str) -> None:
    """A link to a directory outside is recorded as a link; a restore that needs a
    real directory where a link now stands replaces the link, and writes nothing
    through it."""
    user = "root" if env.kind == "local" else "troupe-test"
    outside = owned_directory(user)
    try:
        await sh(env, f"printf 'secret' > {outside}/secret; ln -s {outside} out")
        linked = await take_snapshot(env.ref, shadow_base=shadow_base)
        await sh(env, "rm out; mkdir out; printf 'inside' > out/secret")
        real = await take_snapshot(env.ref, shadow_base=shadow_base)
        await sh(env, f"rm -r out; ln -s {outside} out")

        await restore_snapshot(env.ref, real.commit, shadow_base=shadow_base)
        assert (outside / "secret").read_bytes() == b"secret"
        assert not (env.workdir / "out").is_symlink()
        assert (env.workdir / "out" / "secret").read_bytes() == b"inside"

        await restore_snapshot(env.ref, linked.commit, shadow_base=shadow_base)
        assert os.readlink(env.workdir / "out") == str(outside)
        assert (outside / "secret").read_bytes() == b"secret"
        assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@pytest.mark.parametrize("env", ["local"], indirect=True)
async def test_a_nested_repository_and_a_grown_file_are_left_alone(
    env: EnvUnderTest, shadow_base: str
) -> None:
    """A repository inside the tree is its own git's business: it is skipped, and a
    restore neither deletes nor rewrites it; a file over the cap when the snapshot
    was taken is not deleted by the restore either, whatever its size now."""
    await sh(env, f"git init -q vendor/lib && printf 'v1' > vendor/lib/code && "
                  f"head -c {CAP + 1} /dev/zero > grows")  # fmt: skip
    snapshot = await take_snapshot(env.ref, shadow_base=shadow_base, max_file_bytes=CAP)
    assert {(s.path, s.reason) for s in snapshot.skipped} == {
        ("vendor/lib", "repository"),
        ("grows", "large"),
    }
    await sh(env, "printf 'v2' > vendor/lib/code; printf 'small now' > grows; printf n > new")
    report = await restore_snapshot(
        env.ref, snapshot.commit, shadow_base=shadow_base, max_file_bytes=CAP
    )
    assert report.deleted == ("new",)
    assert (env.workdir / "vendor/lib/code").read_bytes() == b"v2"
    assert (env.workdir / "grows").read_bytes() == b"small now"


@pytest.mark.parametrize("env", ["ssh-user"], indirect=True)
async def test_the_default_shadow_is_in_the_hosts_cache(env: EnvUnderTest) -> None:
    """Over SSH, with no directory given, the shadow repository lives in the remote
    login's ~/.cache/troupe/shadow, outside the tree."""
    home = Path(pwd.getpwnam("troupe-test").pw_dir)
    snapshot = await take_snapshot(env.ref)
    try:
        assert Path(snapshot.shadow).parent == home / ".cache" / "troupe" / "shadow"
        assert (Path(snapshot.shadow) / "HEAD").is_file()
        assert sorted(os.listdir(env.workdir)) == []
    finally:
        shutil.rmtree(snapshot.shadow, ignore_errors=True)


async def test_without_git_the_error_says_so(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host with no git: a clear, typed refusal (the session turns it into one
    warning). The environment's PATH here has every tool but git."""
    bin_dir = without_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(bin_dir))
    work = tmp_path / "work"
    work.mkdir()
    env = await runtime.spawn(LocalEnvironment(work))
    with pytest.raises(SnapshotError) as refused:
        await take_snapshot(env, shadow_base=str(tmp_path / "shadow"))
    assert refused.value.reason == "git-missing"
    assert "git is not installed" in str(refused.value)


def without_git(bin_dir: Path) -> Path:
    """A directory of links to every program on this PATH but git's."""
    bin_dir.mkdir(parents=True)
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            if name.startswith("git") or (bin_dir / name).exists():
                continue
            (bin_dir / name).symlink_to(os.path.join(directory, name))
    assert subprocess.run(["bash", "-c", "command -v git"], env={"PATH": str(bin_dir)},
                          capture_output=True).returncode != 0  # fmt: skip
    return bin_dir


@pytest.mark.parametrize("env", ["local"], indirect=True)
async def test_the_users_ignore_rules_outside_the_tree(
    env: EnvUnderTest, shadow_base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository's .git/info/exclude and the user's global excludes file
    (~/.config/git/ignore) leave files out as the tree's .gitignore does."""
    config = tmp_path / "xdg"
    (config / "git").mkdir(parents=True)
    (config / "git" / "ignore").write_text("*.swp\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    await sh(
        env,
        "git init -q . && printf 'secret.env\\n' >> .git/info/exclude && "
        "printf s > secret.env && printf v > notes.swp && printf k > kept.txt",
    )
    snapshot = await take_snapshot(env.ref, shadow_base=shadow_base)
    assert snapshot.files == 1
    await sh(env, "rm kept.txt secret.env notes.swp")
    report = await restore_snapshot(env.ref, snapshot.commit, shadow_base=shadow_base)
    assert report.recreated == ("kept.txt",)
    assert sorted(os.listdir(env.workdir)) == [".git", "kept.txt"]


@pytest.mark.parametrize("env", ["docker"], indirect=True)
async def test_a_container_without_git_says_so(env: EnvUnderTest) -> None:
    """The container kind goes through the same script, inside the container; the
    test image has no git, so the answer is the typed, one-line refusal a session
    turns into one warning."""
    with pytest.raises(SnapshotError) as refused:
        await take_snapshot(env.ref)
    assert refused.value.reason == "git-missing"
    assert str(refused.value) == "git is not installed on this host"


async def test_a_container_with_git_restores_inside_it(
    docker: DockerForTests,
    runtime: Runtime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same script inside a container whose image has git: the shadow
    repository is made inside the container (its own ~/.cache), and a restore
    brings the tree back byte for byte, with no line of container-specific code."""
    monkeypatch.setattr(dockerd, "_BINARIES", [*dockerd._BINARIES, "git", "flock", "cmp"])
    image = dockerd.build_test_image(docker.daemon, "troupe-snapshots-git:latest")
    work = tmp_path / "work"
    work.mkdir()
    environment = DockerEnvironment(
        image, workspace=str(work), docker_host=docker.daemon.host, owner="tests"
    )
    ref = await runtime.spawn(environment, name="environments/docker-git")
    env = EnvUnderTest("docker", ref, work)
    await make_tree(env)
    before = tree_of(work)
    snapshot = await take_snapshot(env.ref, max_file_bytes=CAP)
    assert not snapshot.shadow.startswith(str(tmp_path))  # inside the container
    assert snapshot.files == len(before) - 3  # not big.bin, ignored.log, build/out
    assert [(s.path, s.reason) for s in snapshot.skipped] == [("big.bin", "large")]
    await sh(env, "printf 'changed' > sed.txt; rm gone.txt; printf n > new.txt")
    report = await restore_snapshot(env.ref, snapshot.commit, max_file_bytes=CAP)
    assert (report.changed, report.recreated, report.deleted) == (
        ("sed.txt",), ("gone.txt",), ("new.txt",)
    )  # fmt: skip
    assert tree_of(work) == before


@pytest.mark.parametrize("env", ["local"], indirect=True)
async def test_what_a_killed_snapshot_left_does_not_block_the_next(
    env: EnvUnderTest, shadow_base: str
) -> None:
    """A snapshot killed mid-way (an abort) can leave git's index.lock and its
    scratch directory behind; the next one, holding the shadow's lock, clears them."""
    await sh(env, "printf a > a")
    first = await take_snapshot(env.ref, shadow_base=shadow_base)
    shadow = Path(first.shadow)
    (shadow / "index.lock").write_text("")
    (shadow / "troupe-tmp.99999").mkdir()
    await sh(env, "printf b > a")
    second = await take_snapshot(env.ref, shadow_base=shadow_base)
    assert second.commit != first.commit
    assert not (shadow / "index.lock").exists()
    assert not [name for name in os.listdir(shadow) if name.startswith("troupe-tmp.")]
