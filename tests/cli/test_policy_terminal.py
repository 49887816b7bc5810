"""``troupe run`` at a terminal with the policy on: the exact approval prompt, a
typed "no, keep it" reaching the model, "always" granting the command prefix,
"stop" interrupting while a request is open; ``troupe audit`` printing the trail;
``--policy unattended`` denying without a question."""

from __future__ import annotations

import json

import trio

from tests.cli.conftest import HANG_GUARD, Home, mock_llm, request_bodies, shell_then_text, text_of
from tests.cli.terminal import Terminal


async def test_run_prompts_exactly_and_answers_reach_the_model(home: Home) -> None:
    (home.work / "build").mkdir()
    script = shell_then_text("rm -rf build", "rm -rf build", "rm -rf build")
    async with mock_llm(script) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "clean")
        terminal = Terminal(argv, home.work, home.env)
        try:
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect("Approve command: rm -rf build? (yes/no)")
                await terminal.type("no, keep it\n")
                seen = await terminal.expect("Approve command: rm -rf build? (yes/no)", seen)
                await terminal.type("always\n")
                await terminal.expect("All done.", seen)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        assert terminal.screen.count("Approve command:") == 2, "the grant covers the third"
        assert "not approved: no, keep it" in text_of(request_bodies(mock)[1])
    assert not (home.work / "build").exists()
    session = terminal.screen.split("session ", 1)[1].split()[0]
    audit = await home.troupe("audit", session, "--json")
    assert audit.returncode == 0, audit.stderr
    records = [json.loads(line) for line in audit.stdout.decode().splitlines()]
    decisions = [r["data"] for r in records if r["kind"] == "policy_decision"]
    assert [(d["action"], d["decided_by"]) for d in decisions] == [
        ("deny", "client"), ("allow", "client"), ("allow", "grant"),
    ]  # fmt: skip
    text = await home.troupe("audit", session)
    assert "denied" in text.stdout.decode() and "rm -rf build" in text.stdout.decode()


async def test_stop_while_an_approval_is_pending_interrupts(home: Home) -> None:
    script = shell_then_text("rm -rf build")
    async with mock_llm(script) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "clean")
        terminal = Terminal(argv, home.work, home.env)
        try:
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect("Approve command: rm -rf build? (yes/no)")
                await terminal.type("please stop\n")
                await terminal.expect("[stopped]", seen)
                await terminal.finish()
        finally:
            await terminal.aclose()
        assert len(request_bodies(mock)) == 1, "nothing went back to the model"
    assert "Traceback" not in terminal.screen


async def test_unattended_run_denies_without_asking(home: Home) -> None:
    (home.work / "build").mkdir()
    async with mock_llm(shell_then_text("rm -rf build")) as mock:
        result = await home.troupe(
            "run", "--base-url", mock.base_url, "--policy", "unattended", "clean"
        )
    assert result.returncode == 0, result.stderr
    assert "Approve command" not in result.stdout.decode()
    assert (home.work / "build").exists()


async def test_unknown_policy_is_bad_input(home: Home) -> None:
    result = await home.troupe("run", "--policy", "yolo", "clean")
    assert result.returncode == 2
    assert "unknown policy preset 'yolo'" in result.stderr.decode()


async def test_rule_grants_the_wider_rule_and_only_that(home: Home) -> None:
    """Issue 30: "rule" approves the rule the prompt shows (commands starting with
    ``rsync`` here, which this preset asks about): a later ``rsync`` line is not
    asked about, a different command is; "rule" where none is offered (an admin
    line) is refused in one line and the request stays open for another answer."""
    (home.work / "build").mkdir()
    script = shell_then_text("rsync -a src/ one/", "rsync -a src/ two/", "rm -rf build")
    async with mock_llm(script) as mock:
        argv = home.argv("run", "--base-url", mock.base_url, "--policy",
                         "agentic-behavior-tool", "copy")  # fmt: skip
        terminal = Terminal(argv, home.work, home.env)
        try:
            with trio.fail_after(HANG_GUARD):
                seen = await terminal.expect("Approve command: rsync -a src/ one/? (yes/no)")
                seen = await terminal.expect("/ rule (commands starting with `rsync` in ", seen)
                await terminal.type("rule\n")
                seen = await terminal.expect("Approve command: rm -rf build? (yes/no)", seen)
                await terminal.type("r\n")
                seen = await terminal.expect("no wider rule is offered", seen)
                await terminal.type("no\n")
                await terminal.expect("All done.", seen)
                assert await terminal.finish() == 0
        finally:
            await terminal.aclose()
        assert "Approve command: rsync -a src/ two/" not in terminal.screen, "the rule covers it"
        assert terminal.screen.count("Approve command:") == 2
        assert "not approved: the user said no" in text_of(request_bodies(mock)[3])
    assert (home.work / "build").exists()
    session = terminal.screen.split("session ", 1)[1].split()[0]
    audit = await home.troupe("audit", session, "--json")
    records = [json.loads(line) for line in audit.stdout.decode().splitlines()]
    decisions = [r["data"] for r in records if r["kind"] == "policy_decision"]
    assert [(d["action"], d["decided_by"]) for d in decisions] == [
        ("allow", "client"), ("allow", "grant"), ("deny", "client"),
    ]  # fmt: skip
