"""Path boundaries (S6.10-S6.12) and ADR-040's confinement, on resolved paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actors.policy.confine import confinement_refusal
from actors.policy.paths import DEFAULT_DENIED, git_control, path_refusal

HOME = "/home/dev"


def refusal(path: str, allowed=(".",), denied=DEFAULT_DENIED, root="/home/dev/repo"):
    return path_refusal(path, allowed, denied, HOME, root)


def test_inside_the_working_directory_is_allowed() -> None:
    assert refusal("/home/dev/repo/src/a.py") is None
    assert refusal("/home/dev/repo") is None


def test_s6_10_outside_the_allowed_paths_is_refused() -> None:
    reason = refusal("/home/dev/outside.txt")
    assert reason is not None and "outside the allowed paths" in reason
    assert refusal("/home/dev/repo-evil/x") is not None


def test_s6_11_denied_wins_over_allowed() -> None:
    reason = refusal("/home/dev/.ssh/id_rsa", allowed=("~",))
    assert reason is not None and "denied" in reason
    assert refusal("/etc/passwd", allowed=("/",)) is not None


def test_credentials_and_troupes_own_files_are_denied_even_when_home_is_allowed() -> None:
    for secret in ("/home/dev/.aws/credentials", "/home/dev/.kube/config", "/home/dev/.netrc",
                   "/home/dev/.pgpass", "/home/dev/.docker/config.json",
                   "/home/dev/.config/gcloud/credentials.db", "/home/dev/.azure/x",
                   "/home/dev/.local/share/troupe/token",
                   "/home/dev/.config/troupe/config.toml"):  # fmt: skip
        reason = refusal(secret, allowed=("~",))
        assert reason is not None and "denied" in reason, secret


def test_s6_12_a_symlink_is_judged_by_its_target(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "etc").symlink_to("/etc")
    resolved = os.path.realpath(root / "etc" / "hosts")
    assert path_refusal(resolved, (".",), DEFAULT_DENIED, HOME, str(root)) is not None
    inside = os.path.realpath(root / "a.txt")
    assert path_refusal(inside, (".",), DEFAULT_DENIED, HOME, str(root)) is None


def test_confinement() -> None:
    root = "/srv/repo"
    assert confinement_refusal("ls src", root) is None
    assert confinement_refusal("cat ../x", root) is not None
    assert confinement_refusal("cd sub/../..", root) is not None
    assert confinement_refusal("cat /etc/shadow", root) is not None
    assert confinement_refusal("cp a /srv/repo/b", root) is None
    assert confinement_refusal("python --out=/var/x", root) is not None
    assert confinement_refusal("ls > /dev/null", root) is None
    assert confinement_refusal("file..txt", root) is None


@pytest.mark.parametrize("path", ["/proc/1234/environ", "/proc/1/mem", "/proc/77/root/etc/x"])
def test_another_processs_proc_files_are_refused_whatever_is_allowed(path: str) -> None:
    refusal = path_refusal(path, ("/",), (), "/home/u", "/work")
    assert refusal is not None and "(/proc)" in refusal


def test_ordinary_proc_files_stay_readable() -> None:
    assert path_refusal("/proc/cpuinfo", ("/",), (), "/home/u", "/work") is None


def test_git_control_finds_pointers_and_every_repositorys_hooks_and_config() -> None:
    assert git_control("/w/.git") == "/w/.git"
    assert git_control("/w/sub/.git/hooks/pre-commit") == "/w/sub/.git/hooks"
    assert git_control("/w/.git/config") == "/w/.git/config"
    assert git_control("/w/a/../.git/hooks") == "/w/.git/hooks"
    for harmless in ("/w/.gitignore", "/w/.github/workflows/ci.yml", "/w/.git/info/exclude",
                     "/w/.git/objects/ab/cdef", "/w/docs/git/hooks"):  # fmt: skip
        assert git_control(harmless) is None, harmless
