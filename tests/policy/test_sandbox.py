"""The bubblewrap sandbox: for real (read-only root, writable workspace, no
network), and the policy's side (what each preset asks for) and the mount plan."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from actors.policy.presets import POLICY_PRESETS, policy_preset, resolve_policy
from actors.policy.sandbox import Sandbox, bwrap_argv, find_bwrap, sandbox_for
from environments.sandbox import local_facts, mount_args, spec_paths

BWRAP = find_bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bwrap missing (apt-get install bubblewrap)")


def run(workdir: Path, command: str, network: bool = False) -> subprocess.CompletedProcess[str]:
    assert BWRAP is not None
    spec = Sandbox(writable=(str(workdir),), network=network)
    argv = bwrap_argv(BWRAP, spec, ["bash", "-c", command])
    return subprocess.run(argv, cwd=workdir, capture_output=True, text=True, timeout=30)


@needs_bwrap
def test_system_paths_are_read_only(tmp_path: Path) -> None:
    result = run(tmp_path, "touch /etc/troupe-sandbox-test")
    assert result.returncode != 0
    assert "Read-only" in result.stderr
    assert not Path("/etc/troupe-sandbox-test").exists()


@needs_bwrap
def test_the_working_directory_is_writable(tmp_path: Path) -> None:
    assert run(tmp_path, "echo ok > made.txt").returncode == 0
    assert (tmp_path / "made.txt").read_text() == "ok\n"


@needs_bwrap
def test_no_network_unless_allowed(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        assert "connected" not in run(tmp_path, probe).stdout
        assert "connected" in run(tmp_path, probe, network=True).stdout


def test_the_default_is_auto_with_the_workspace_write_profile() -> None:
    """Every preset sandboxes by default; ``sandboxed`` requires it; ``permissive``
    is the one explicit ``off``."""
    for name in POLICY_PRESETS:
        spec = sandbox_for(policy_preset(name), "/work")
        if name == "permissive":
            assert spec is None
            continue
        assert spec is not None, name
        assert spec.required == (name == "sandboxed"), name
        assert spec.writable == ("/work",) and not spec.network
        assert spec.protected == ("/work/.git/hooks", "/work/.git/config", "/work/.troupe")
        assert "~/.ssh" in spec.hidden and "~/.local/share/troupe" in spec.hidden
        assert "/etc/passwd" not in spec.hidden  # user lookups need it


def test_network_and_protected_paths_come_from_the_policy() -> None:
    policy = resolve_policy(
        "interactive", {"network": "on", "protected_paths": [".git/hooks", "secret.cfg"]}
    )
    spec = sandbox_for(policy, "/work")
    assert spec is not None and spec.network
    assert spec.protected == ("/work/.git/hooks", "/work/secret.cfg")
    assert sandbox_for(resolve_policy("interactive", {"sandbox": "off"}), "/work") is None


def test_protected_paths_pin_their_parents_and_hidden_ones_come_last(tmp_path: Path) -> None:
    """The plan: writable roots, then each directory between a root and a protected
    path bound over itself (a mount point cannot be renamed), then the protected
    path read-only, then the hidden paths; missing paths are skipped."""
    work = tmp_path / "work"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("")
    (work / "keys").mkdir()
    spec = Sandbox(
        writable=(str(work),),
        protected=(str(work / ".git/hooks"), str(work / ".git/config"), str(work / ".troupe")),
        hidden=(str(work / "keys"), "~/.nothing-here-troupe"),
    )
    args = mount_args(spec, local_facts(spec_paths(spec), str(tmp_path)))
    git = str(work / ".git")
    assert args == [
        "--bind", str(work), str(work),
        "--bind", git, git,
        "--ro-bind", f"{git}/hooks", f"{git}/hooks",
        "--ro-bind", f"{git}/config", f"{git}/config",
        "--tmpfs", str(work / "keys"), "--remount-ro", str(work / "keys"),
        "--unshare-net",
    ]  # fmt: skip


def test_a_protected_path_reached_through_a_symlink_is_bound_where_it_is(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "real-troupe").mkdir(parents=True)
    (work / ".troupe").symlink_to(work / "real-troupe")
    spec = Sandbox(writable=(str(work),), protected=(str(work / ".troupe"),))
    args = mount_args(spec, local_facts(spec_paths(spec), str(tmp_path)))
    real = str(work / "real-troupe")
    assert ["--ro-bind", real, real] == args[3:6]


@needs_bwrap
def test_a_hidden_file_inside_a_hidden_directory_is_left_to_it(tmp_path: Path) -> None:
    """``~/.config/troupe`` and ``~/.config/troupe/config.toml`` both hidden: the
    directory's empty read-only tmpfs has no mount point for the file, so the file is
    not mounted again (bwrap would fail: "Can't create file ... Read-only file
    system"); it is unseen either way, in whichever order the two are listed."""
    assert BWRAP is not None
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text("secret = 1\n")
    for hidden in ((str(config), str(config / "config.toml")),
                   (str(config / "config.toml"), str(config))):  # fmt: skip
        spec = Sandbox(writable=(str(work),), hidden=hidden)
        facts = local_facts(spec_paths(spec), str(tmp_path))
        assert mount_args(spec, facts).count("/dev/null") == 0
        argv = bwrap_argv(BWRAP, spec, ["bash", "-c", f"ls -A {config}; echo end"], facts)
        result = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=30)
        assert (result.returncode, result.stdout) == (0, "end\n"), result.stderr


def test_a_worktrees_git_file_is_read_only(tmp_path: Path) -> None:
    """In a git worktree ``.git`` is a file naming the git directory; rewritten it
    would send the user's next git command to hooks the model wrote."""
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text("gitdir: /elsewhere/.git/worktrees/work\n")
    spec = Sandbox(writable=(str(work),), protected=(str(work / ".git/hooks"),))
    args = mount_args(spec, local_facts(spec_paths(spec), str(tmp_path)))
    git = str(work / ".git")
    assert args == ["--bind", str(work), str(work), "--ro-bind", git, git, "--unshare-net"]
