"""The policy engine: categories, modes, blocklist, grants, confinement, presets."""

from __future__ import annotations

import pytest

from actors.policy.blocklist import matches
from actors.policy.engine import (
    Grant,
    Policy,
    decide,
    exact_for,
    facts_for,
    grant_for,
    rule_for,
)
from actors.policy.presets import POLICY_PRESETS, UnknownPreset, policy_preset
from actors.policy.shell import Invocation

ROOT = "/work/repo"


def shell(policy: Policy, command: str, grants: tuple[Grant, ...] = ()):
    return decide(
        policy, facts_for("shell", "write", {"command": command}, ROOT, shell=True), grants
    )


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
    facts = facts_for("shell", "write", {"command": "rm -rf build"}, ROOT, shell=True)
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


# --- "always" means that command (issue 30) -------------------------------------------


def _facts(command: str, root: str = ROOT):
    return facts_for("shell", "write", {"command": command}, root, home="/home/dev", shell=True)


def test_always_for_rm_rf_build_does_not_cover_elsewhere() -> None:
    policy = policy_preset("interactive")
    always = grant_for(_facts("rm -rf build"), "command")
    assert decide(policy, _facts("rm -rf build"), (always,)).action == "allow"
    assert decide(policy, _facts("rm -rf ../elsewhere"), (always,)).action == "ask"
    assert decide(policy, _facts("rm -rf build ~"), (always,)).action == "deny"  # blocklist
    assert decide(policy, _facts("rm -rf build; rm -rf ../x"), (always,)).action == "ask"


def test_always_for_a_feature_push_does_not_cover_a_force_push_of_main() -> None:
    policy = policy_preset("interactive")
    always = grant_for(_facts("git push origin feature"), "command")
    assert decide(policy, _facts("git push origin feature"), (always,)).action == "allow"
    assert decide(policy, _facts("git push --force origin main"), (always,)).action == "ask"
    # The wider answer is not offered for an admin line, and asking for it gives "always".
    assert rule_for(_facts("git push origin feature")) is None
    assert grant_for(_facts("git push origin feature"), "rule") == always


def test_always_holds_only_in_the_same_working_directory() -> None:
    policy = policy_preset("interactive")
    always = grant_for(_facts("rm -rf build"), "command")
    assert decide(policy, _facts("rm -rf build", "/work/other"), (always,)).action == "ask"


def test_the_wider_rule_shows_what_it_allows_and_never_covers_admin() -> None:
    policy = Policy(write="ask")
    facts = _facts("npm test")
    assert rule_for(facts) == f"commands starting with `npm test` in {ROOT}"
    assert exact_for(facts) == f"exactly `npm test` in {ROOT}"
    rule = grant_for(facts, "rule")
    assert rule == Grant("shell", command_prefix="npm test", cwd=ROOT)
    assert decide(policy, _facts("npm test -- --watch=false"), (rule,)).action == "allow"
    assert decide(policy, _facts("npm run build"), (rule,)).action == "ask"
    assert decide(policy, _facts("npm test && rm -rf dist"), (rule,)).action == "ask"
    assert decide(policy, _facts("npm test > ~/.bashrc"), (rule,)).action == "ask"
    assert decide(policy, _facts("npm test", "/elsewhere"), (rule,)).action == "ask"


def test_a_whole_tool_grant_never_covers_an_admin_line() -> None:
    policy = Policy(write="ask")
    assert decide(policy, _facts("touch x"), (Grant("shell"),)).action == "allow"
    assert decide(policy, _facts("rm -rf x"), (Grant("shell"),)).action == "ask"


def test_always_for_another_tool_is_those_arguments() -> None:
    policy = Policy(write="ask")
    facts = facts_for("write_file", "write", {"path": "a.txt", "content": "x"}, ROOT)
    always = grant_for(facts, "command")
    assert decide(policy, facts, (always,)).action == "allow"
    other = facts_for("write_file", "write", {"path": "b.txt", "content": "x"}, ROOT)
    assert decide(policy, other, (always,)).action == "ask"
    assert rule_for(other) == "every write_file call"
    assert decide(policy, other, (grant_for(facts, "rule"),)).action == "allow"
