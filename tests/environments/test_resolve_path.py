"""ResolvePath on every environment kind (local and the fixture's sshd): symlinks
and ``..`` resolved on the host; the session's path judge refuses what they hide."""

from __future__ import annotations

from actors.policy.presets import policy_preset
from actors.session.path_checks import PathJudge
from actors.tools.core.patch import patch_targets
from protocol.environment import ResolvedPath, ResolvePath
from tests.environments.conftest import EnvUnderTest


async def test_resolve_follows_symlinks_and_dotdot(env: EnvUnderTest) -> None:
    (env.workdir / "etc-link").symlink_to("/etc")
    (env.workdir / "sub").mkdir()
    resolved = await env.ref.ask(ResolvePath("etc-link/not-there"))
    assert isinstance(resolved, ResolvedPath)
    assert resolved.path == "/etc/not-there"
    assert resolved.home.startswith("/")
    up = await env.ref.ask(ResolvePath("sub/../../outside.txt"))
    assert up.path == str(env.workdir.parent / "outside.txt")


async def test_the_judge_refuses_hidden_escapes_and_allows_inside(env: EnvUnderTest) -> None:
    (env.workdir / "etc-link").symlink_to("/etc")
    judge = PathJudge(env.ref, str(env.workdir))
    policy = policy_preset("interactive")
    through_link = await judge.refusal(policy, ["etc-link/hosts"], writes=True)
    assert through_link is not None and "resolves to /etc/hosts" in through_link
    outside = await judge.refusal(policy, ["../outside.txt"], writes=True)
    assert outside is not None and "outside the allowed paths" in outside
    assert await judge.refusal(policy, ["src/new.py"], writes=True) is None
    assert await judge.refusal(policy, ["etc-link/hosts"], writes=False) is None
    shadow = await judge.refusal(policy, ["/etc/shadow"], writes=False)
    assert shadow is not None and "denied path" in shadow


def test_patch_targets_are_paths() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: ../b.py\n@@\n-x\n+y\n*** End Patch"
    )
    assert patch_targets({"patch": patch}) == ["a.py", "../b.py"]
