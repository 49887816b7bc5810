"""ResolvePath on every environment kind (local and the fixture's sshd): symlinks
and ``..`` resolved on the host; the session's path judge refuses what they hide."""

from __future__ import annotations

import os

import pytest

from actors.policy.presets import policy_preset
from actors.session.path_checks import PathJudge
from actors.tools.core.patch import patch_targets
from environments.errors import HardLinkRefused, LinkInPath
from protocol.environment import (
    DeleteFile,
    ListDirectory,
    PathGuard,
    ReadFile,
    ResolvedPath,
    ResolvePath,
    StatPath,
    WriteFile,
)
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


async def test_resolution_counts_hard_links_and_finds_other_names(env: EnvUnderTest) -> None:
    """``ln secret/key k``: k is reported with two names, and the other one is
    found under the directories the policy denies."""
    await env.ref.ask(WriteFile("secret/key", "KEY\n"))
    os.link(env.workdir / "secret" / "key", env.workdir / "k")
    plain = await env.ref.ask(ResolvePath("secret/../k"))
    assert (plain.path, plain.links, plain.also_at) == (str(env.workdir / "k"), 2, None)
    searched = await env.ref.ask(ResolvePath("k", same_file_in=(str(env.workdir / "secret"),)))
    assert searched.also_at == str(env.workdir / "secret" / "key")
    assert (await env.ref.ask(ResolvePath("secret"))).links == 0  # a directory
    assert (await env.ref.ask(ResolvePath("missing"))).links == 0


async def test_guarded_requests_follow_no_link_and_refuse_hard_links(env: EnvUnderTest) -> None:
    """On every kind of host, a judged path is used exactly: a link on the way is
    refused (not followed), a hard-linked file only with ``hard_links``."""
    await env.ref.ask(WriteFile("real/f", "real\n"))
    (env.workdir / "via").symlink_to(env.workdir / "real")
    guard = PathGuard()
    through = str(env.workdir / "via" / "f")
    with pytest.raises(LinkInPath):
        await env.ref.ask(WriteFile(through, "changed\n", guard=guard))
    with pytest.raises(LinkInPath):
        await env.ref.ask(ReadFile(through, guard=guard))
    with pytest.raises(LinkInPath):
        await env.ref.ask(DeleteFile(through, guard=guard))
    assert (env.workdir / "real" / "f").read_text() == "real\n"
    os.link(env.workdir / "real" / "f", env.workdir / "h")
    hard = str(env.workdir / "h")
    with pytest.raises(HardLinkRefused):
        await env.ref.ask(ReadFile(hard, guard=guard))
    with pytest.raises(HardLinkRefused):
        await env.ref.ask(WriteFile(hard, "changed\n", guard=guard))
    assert (env.workdir / "real" / "f").read_text() == "real\n"
    await env.ref.ask(WriteFile(hard, "approved\n", guard=PathGuard(hard_links=True)))
    assert (env.workdir / "real" / "f").read_text() == "approved\n"
    inside = str(env.workdir / "real" / "new" / "g")
    await env.ref.ask(WriteFile(inside, "made\n", guard=guard))
    assert (await env.ref.ask(ReadFile(inside, guard=guard))).text == "1 | made"
    assert await env.ref.ask(StatPath(str(env.workdir / "via"), guard=guard)) == "other"
    listed = await env.ref.ask(ListDirectory(str(env.workdir / "real"), 2, guard=guard))
    assert [entry.name for entry in listed] == ["f", "new", "new/g"]
    await env.ref.ask(DeleteFile(inside, guard=guard))
    assert not (env.workdir / "real" / "new" / "g").exists()


async def test_the_entry_of_a_symlink_is_the_link_itself(env: EnvUnderTest) -> None:
    (env.workdir / "sub").mkdir()
    (env.workdir / "sub" / "link").symlink_to("/etc/hostname")
    found = await env.ref.ask(ResolvePath("sub/../sub/link"))
    assert found.path == "/etc/hostname"
    assert found.entry == str(env.workdir / "sub" / "link")
    assert (await env.ref.ask(ResolvePath("."))).entry == str(env.workdir)
