"""The policy engine: categories, modes, blocklist, grants, confinement, presets."""

from __future__ import annotations

import pytest

from actors.policy.blocklist import matches
from actors.policy.engine import Grant, Policy, decide, facts_for, grant_for
from actors.policy.presets import POLICY_PRESETS, UnknownPreset, policy_preset
from actors.policy.shell import Invocation

ROOT = "/work/repo"


def shell(policy: Policy, command: str, grants: tuple[Grant, ...] = ()):
    return decide(policy, facts_for("shell", "write", {"command": command}, ROOT), grants)


def tool(policy: Policy, name: str, category: str, **arguments):
    return decide(policy, facts_for(name, category, arguments, ROOT))  # type: ignore[arg-type]


def test_interactive_allows_read_and_write_and_asks_for_admin() -> None:
    policy = policy_preset("interactive")
    assert shell(policy, "ls").action == "allow"
    assert shell(policy, "pytest -q").action == "allow"
    decision = shell(policy, "rm -rf build")
    assert decision.action == "ask"
    assert "recursive delete" in decision.reason
    assert decision.subject == "rm -rf build"


def test_unattended_never_asks() -> None:
    policy = policy_preset("unattended")
    assert shell(policy, "cat x").action == "allow"
    denied = shell(policy, "rm -rf build")
    assert denied.action == "deny"
    assert "unattended" in denied.reason
    assert tool(policy, "write_file", "write", path="a").action == "deny"


def test_s6_14_admin_in_cron_blocked_unless_listed() -> None:
    listed = Policy(name="job", mode="unattended", write="deny", admin="deny",
                    allow=("write_file", "command:git push"))  # fmt: skip
    assert tool(listed, "write_file", "write", path="a").action == "allow"
    assert shell(listed, "git push origin main").action == "allow"
    assert shell(listed, "git push origin main && rm -rf /x").action == "deny"
    assert shell(listed, "curl https://example.com").action == "deny"


def test_s6_5_blocklist_denies_regardless_of_category() -> None:
    policy = policy_preset("agent-loop-and-tool-system")
    decision = shell(policy, "rm -rf /")
    assert decision.action == "deny"
    assert decision.rule == "blocklist"
    assert "blocklist" in decision.reason
    assert shell(policy, "bash -c 'sudo ls'").action == "deny"
    assert shell(policy, "chmod -R 777 x").action == "deny"
    assert shell(policy, "chmod +x x").action == "allow"
    assert shell(policy_preset("interactive"), "rm -rf /").action == "deny"


def test_blocklist_patterns() -> None:
    assert matches("rm -r /", Invocation(("rm", "-fr", "/")))
    assert not matches("rm -r /", Invocation(("rm", "-f", "/")))
    assert matches("mkfs*", Invocation(("mkfs.ext4", "/dev/x")))
    assert matches("chmod 777", Invocation(("chmod", "-R", "777", "d")))
    assert not matches("dd of=/dev/*", Invocation(("dd", "of=disk.img")))


def test_grants_for_the_session() -> None:
    policy = policy_preset("interactive")
    facts = facts_for("shell", "write", {"command": "rm -rf build"}, ROOT)
    grant = grant_for(facts, "command")
    assert grant == Grant("shell", command="rm -rf build", cwd=ROOT)
    assert shell(policy, "rm -rf build", (grant,)).action == "allow"
    assert shell(policy, "rm -rf build", (grant,)).rule == "grant"
    assert shell(policy, "rm -rf dist", (grant,)).action == "ask"
    assert shell(policy, "git push", (grant,)).action == "ask"
    assert shell(policy, "git push", (Grant("shell"),)).action == "ask"


def test_agentic_behavior_asks_for_its_listed_commands() -> None:
    policy = policy_preset("agentic-behavior-tool")
    assert shell(policy, "curl http://127.0.0.1:9/").action == "ask"
    assert shell(policy, "ls").action == "allow"


def test_adr_040_confines_commands() -> None:
    policy = policy_preset("adr-040")
    assert shell(policy, "cat ../secret").action == "deny"
    assert shell(policy, "cat /home/other/x").reason.startswith("absolute path outside")
    assert shell(policy, f"cat {ROOT}/src/a.py").action == "allow"
    assert shell(policy, "/usr/bin/python3 -V > /dev/null").action == "allow"
    assert shell(policy, "ls").action == "allow"


def test_permissive_allows_admin() -> None:
    assert shell(policy_preset("permissive"), "rm -rf build").action == "allow"


def test_denied_tools() -> None:
    policy = Policy(deny_tools=("shell",))
    assert shell(policy, "ls").action == "deny"


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(UnknownPreset, match="interactive"):
        policy_preset("nope")
    assert "sandboxed" in POLICY_PRESETS
