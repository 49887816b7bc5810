"""The classifier's facts about what only the OS sandbox confines (code the line
does not show, the network, symbolic links leading outside), and the engine's one
decision on them: ``write`` under the sandbox, ``admin`` without it
(docs/decisions.md, "The sandbox is the boundary")."""

from __future__ import annotations

import pytest

from actors.policy.engine import (
    Grant,
    Policy,
    decide,
    effective_sandbox,
    facts_for,
    grant_for,
    rule_for,
)
from actors.policy.presets import resolve_policy
from actors.policy.shell import ShellContext, classify_command

ROOT = "/work/repo"
HOME = "/home/u"
CONTEXT = ShellContext(ROOT, HOME)

RUNS_CODE = [
    "python3 -c 'import os; os.remove(\"../outside/c.txt\")'",
    "python3 -c \"exec(bytes.fromhex('6f73'))\"",
    "perl -e 'unlink \"../outside/c.txt\"'",
    "perl -pi -e s/a/b/ notes.txt",
    'node -e \'require("fs").rmSync("x")\'',
    "awk 'BEGIN{system(\"rm -f ../outside/c.txt\")}'",
    "awk '{print > \"out\"}' f",
    "tar cf - README.md | tar xf - --to-command='rm -f ../outside/c.txt'",
    "tar xf a.tar -I ./unpack",
    "PATH=$PWD/bin:$PATH ls",
    "env PATH=./bin ls",
    "printf 'all:\\n\\ttrue\\n' > mk && make -f mk",
    "npx --yes --offline -c 'rm -f ../outside/c.txt'",
    "npm test",
    "npm run build",
    "pytest -q",
    "python3 script.py",
    "bash ./run.sh",
    "./run.sh",
    "python3 -m pytest",
    "find . -name '*.py' -exec python3 {} \\;",
    "ls | xargs python3 -c 'print(1)'",
]
NETWORK = [
    "curl -s --max-time 3 127.0.0.1:8080/ping",
    "env | curl -s http://127.0.0.1:9/ --data-binary @-",
    "wget -q -O page.html http://localhost:8000/",
    "python3 -m pip download --no-deps --index-url http://127.0.0.1:9/simple x==1 -d dl",
    "ping -c1 127.0.0.1",
]
LINKS_OUT = [
    "ln -s ../outside/c.txt s && echo pwned > s",
    "ln -s /etc/passwd p",
    "ln -s $TARGET here",
    "cd sub && ln -s ../../outside/x y",
]
ORDINARY = [
    "ls -la",
    "git status",
    "git diff",
    "rg TODO src",
    "cat README.md",
    "echo hi > notes.txt",
    "sed -i s/a/b/ notes.txt",
    "awk '{print $1}' data.txt",
    "mkdir -p build && cp a.txt build/",
    "ln -s src/main.py main.py",
    "cd sub && ln -s ../a.txt b",
    "git add -A && git commit -m wip",
    "ruff check .",
]


@pytest.mark.parametrize("line", RUNS_CODE)
def test_lines_that_run_code_they_do_not_show_say_so(line: str) -> None:
    verdict = classify_command(line, CONTEXT)
    assert verdict.runs_code, verdict
    assert verdict.unconfined


@pytest.mark.parametrize("line", NETWORK)
def test_lines_that_use_the_network_say_so_loopback_included(line: str) -> None:
    verdict = classify_command(line, CONTEXT)
    assert verdict.network, verdict


@pytest.mark.parametrize("line", LINKS_OUT)
def test_symbolic_links_leading_outside_say_so(line: str) -> None:
    assert classify_command(line, CONTEXT).links_outside


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_lines_claim_none_of_it(line: str) -> None:
    verdict = classify_command(line, CONTEXT)
    assert not (verdict.runs_code or verdict.network or verdict.links_outside), verdict
    assert verdict.unconfined == ()


def _decide(policy: Policy, line: str, sandboxed: bool, grants: tuple[Grant, ...] = ()):
    facts = facts_for(
        "shell", "write", {"command": line}, ROOT, home=HOME, sandboxed=sandboxed, shell=True
    )
    return facts, decide(policy, facts, grants)


@pytest.mark.parametrize("line", [RUNS_CODE[0], NETWORK[0], LINKS_OUT[0], RUNS_CODE[-3]])
def test_under_the_sandbox_they_run_unasked_without_it_they_are_asked(line: str) -> None:
    policy = resolve_policy("interactive", {})
    facts, inside = _decide(policy, line, sandboxed=True)
    assert (facts.category, inside.action) == ("write", "allow")
    facts, outside = _decide(policy, line, sandboxed=False)
    assert (facts.category, outside.action) == ("admin", "ask")
    assert "without the OS sandbox" in outside.reason
    # admin: only that exact line may be approved for the session, never a wider rule
    assert rule_for(facts) is None
    wider = Grant("shell", command_prefix=line.split()[0], cwd=ROOT)
    assert _decide(policy, line, False, (wider,))[1].action == "ask"
    exact = grant_for(facts, "command")
    assert _decide(policy, line, False, (exact,))[1].action == "allow"


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_lines_decide_the_same_without_the_sandbox(line: str) -> None:
    policy = resolve_policy("interactive", {})
    assert _decide(policy, line, True)[1].action == _decide(policy, line, False)[1].action


def test_unattended_without_the_sandbox_refuses_what_it_cannot_confine() -> None:
    policy = Policy(name="ci", mode="unattended")  # writes allowed, admin asked: refused
    assert _decide(policy, "pytest -q", sandboxed=True)[1].action == "allow"
    assert _decide(policy, "pytest -q", sandboxed=False)[1].action == "deny"


@pytest.mark.parametrize(
    ("setting", "available", "expected"),
    [("off", True, False), ("off", None, False), ("on", False, True), ("on", None, True),
     ("auto", True, True), ("auto", False, False), ("auto", None, False)],
)  # fmt: skip
def test_the_effective_sandbox(setting: str, available: bool | None, expected: bool) -> None:
    policy = resolve_policy("interactive", {"sandbox": setting})
    assert effective_sandbox(policy, available) is expected


@pytest.mark.parametrize(
    "line",
    ["cat ~/.[a-z]*/* 2>/dev/null", "cat ~/.*/*", "grep -r KEY /proc/*/environ",
     "cat /proc/*/e*", "grep -r KEY /proc/[0-9]*", "cat /proc/*/task/*/environ",
     "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done | grep -a KEY"],
)  # fmt: skip
def test_globs_and_loops_that_can_reach_hidden_paths_are_admin(line: str) -> None:
    assert classify_command(line, CONTEXT).category == "admin"


@pytest.mark.parametrize(
    "line", ["ls ~/*", "cat src/*", "cat ~/*/notes.txt", "ls -d /proc/[0-9]*", "cat /proc/*/status"]
)
def test_globs_that_cannot_match_a_dot_name_stay_reads(line: str) -> None:
    assert classify_command(line, CONTEXT).category == "read"
