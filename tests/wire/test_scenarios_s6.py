"""Scenarios S6.1-S6.14 of agent-loop-and-tool-system.md ("Tool System"), one
test each, end to end: a scripted model over loopback HTTP drives a real server
through a real WebSocket client. Scenarios that touch files or commands run in
the local environment and over the fixture's real OpenSSH sshd.

Unit-level companions: tests/policy/test_cli_tools.py (S6.7-S6.9, S6.13 on the
YAML layer), tests/wire/test_policy_paths.py (S6.12 locally: a symlink to /etc).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio

from actors.config.trust import set_trust
from actors.policy.engine import ALLOWLIST_ENV
from protocol.client import TroupeClient
from protocol.session import SessionConfig
from protocol.wire import AddSSHEnvironment, CreateSession, Event, SubmitInput
from tests.environments import conftest as environment_fixtures
from tests.wire.conftest import Stack, StartStack, events_until, subscribe
from tests.wire.test_ssh_environments import ssh_fields

sshd = environment_fixtures.sshd


@pytest.fixture(autouse=True)
def own_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trust list (and user tools file) of a user of this test alone."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


BOTH = pytest.mark.parametrize("where", ["local", "ssh"])
BASH_OWN = {"PWD", "SHLVL", "_", "OLDPWD"}
"""Variables bash sets by itself in every command."""

TOOLS_YAML = """
tools:
  - name: say
    description: "Print text"
    category: read
    cmd: printf
    args: ["%s|", "{{text}}"]
    parameters:
      text: {type: string, maxLength: 64}
  - name: kubectl_get
    category: read
    cmd: echo
    args: ["get", "{{resource}}"]
    parameters:
      resource: {type: string, enum: [pods, services]}
  - name: show_token
    category: read
    cmd: printenv
    args: ["S613_TOKEN"]
    env:
      S613_TOKEN: "${S613_TOKEN}"
  - name: deploy
    category: admin
    cmd: echo
    args: ["deployed"]
"""


@dataclass
class Run:
    stack: Stack
    client: TroupeClient
    work: Path
    environment: str | None

    async def submit(self, config: SessionConfig | None = None) -> list[Event]:
        """One session, one input; every event up to its processing_end."""
        created = await self.client.request(
            CreateSession, environment=self.environment, config=config or SessionConfig()
        )
        session = created.session.session_id
        await subscribe(self.client, session)
        await self.client.request(SubmitInput, session=session, text="go")
        return await events_until(self.client, "processing_end")


@asynccontextmanager
async def scenario(
    start_stack: StartStack,
    request: pytest.FixtureRequest,
    where: str,
    tmp_path: Path,
    *calls: tuple[str, dict[str, Any]],
) -> AsyncIterator[Run]:
    """A server whose model makes ``calls`` one per turn (then says done), with a
    session environment that is this machine or the sshd."""
    turns: list[dict[str, Any]] = []
    for name, arguments in calls:
        turns += [{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": "done"}]
    async with start_stack({"turns": turns, "repeat": False}) as stack, stack.client() as client:
        if where == "ssh":
            server = request.getfixturevalue("sshd")
            work = tmp_path / "remote"
            work.mkdir()
            await client.request(AddSSHEnvironment, **ssh_fields(server, "box", work))
            run = Run(stack, client, work, "/environments/ssh/box")
        else:
            run = Run(stack, client, stack.work, None)
        (run.work / ".troupe").mkdir()
        (run.work / ".troupe" / "tools.yaml").write_text(TOOLS_YAML)
        set_trust(run.work, True)  # a project's tools load once trusted
        yield run


def ends(events: list[Event]) -> list[dict[str, Any]]:
    return [event.data for event in events if event.kind == "tool_call_end"]


def decisions(events: list[Event]) -> list[dict[str, Any]]:
    return [event.data for event in events if event.kind == "policy_decision"]


def shell(command: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("shell", {"command": command, **extra})


@BOTH
async def test_s6_1_valid_call_runs_and_returns_output(start_stack, request, where, tmp_path):
    async with scenario(start_stack, request, where, tmp_path, shell("echo hello")) as run:
        (end,) = ends(await run.submit())
    assert not end["is_error"] and end["output"].startswith("hello\n")


async def test_s6_2_invalid_parameters_are_a_validation_error(start_stack, request, tmp_path):
    call = ("shell", {"command": 42})
    async with scenario(start_stack, request, "local", tmp_path, call) as run:
        (end,) = ends(await run.submit())
        bodies = [r.body.decode() for r in run.stack.mock.requests]
    assert end["is_error"] and "Expected `str`" in end["output"]
    assert "Expected `str`" in bodies[-1], "the model reads the validation error"


@BOTH
async def test_s6_3_output_over_the_limit_is_truncated_with_a_notice(
    start_stack, request, where, tmp_path
):
    call = shell("yes x | head -n 5000 | tr -d '\\n'")
    async with scenario(start_stack, request, where, tmp_path, call) as run:
        (end,) = ends(await run.submit(SessionConfig(tool_output_limits={"shell": 1000})))
        last = run.stack.mock.requests[-1].body.decode()
    assert end["output"].startswith("x" * 5000 + "\n")  # the event keeps it whole
    assert "Tool output was truncated" in last
    assert "x" * 1200 not in last


@BOTH
async def test_s6_4_a_command_past_its_timeout_is_killed(start_stack, request, where, tmp_path):
    call = shell("echo started; sleep 30", timeout_ms=500)
    async with scenario(start_stack, request, where, tmp_path, call) as run:
        (end,) = ends(await run.submit())
    assert "started" in end["output"] and "timed out after 500ms" in end["output"]


@BOTH
async def test_s6_5_a_dangerous_command_is_blocked(start_stack, request, where, tmp_path):
    calls = (shell("rm -rf /"), shell("rm -rf build"))
    async with scenario(start_stack, request, where, tmp_path, *calls) as run:
        (run.work / "build").mkdir()
        first = await run.submit()  # the default preset: catastrophic commands
        seed = await run.submit(SessionConfig(policy="agent-loop-and-tool-system"))
        assert (run.work / "build").exists()
    for events in (first, seed):
        (decision,) = decisions(events)
        assert (decision["action"], decision["rule"]) == ("deny", "blocklist")
        (end,) = ends(events)
        assert end["is_error"] and "blocklist" in end["output"]


@BOTH
async def test_s6_6_commands_get_only_allowlisted_variables(
    start_stack, request, where, tmp_path, monkeypatch
):
    monkeypatch.setenv("S66_API_KEY", "sk-leak")
    monkeypatch.setenv("S66_PLAIN", "plain")
    async with scenario(start_stack, request, where, tmp_path, shell("env")) as run:
        config = SessionConfig(policy="agent-loop-and-tool-system")
        (end,) = ends(await run.submit(config))
    names = {line.split("=", 1)[0] for line in end["output"].splitlines()[:-1] if "=" in line}
    assert "PATH" in names and "HOME" in names
    assert names - BASH_OWN <= set(ALLOWLIST_ENV), names
    assert "sk-leak" not in end["output"] and "plain" not in end["output"]


@BOTH
async def test_s6_7_yaml_tool_is_registered_and_callable(start_stack, request, where, tmp_path):
    async with scenario(start_stack, request, where, tmp_path, ("say", {"text": "hi"})) as run:
        events = await run.submit()
        tools = run.stack.mock.requests[0].body.decode()
    assert '"say"' in tools and "maxLength" in tools  # described to the model
    (end,) = ends(events)
    assert not end["is_error"] and end["output"].startswith("hi|")


@BOTH
async def test_s6_8_metacharacters_in_arguments_stay_literal(start_stack, request, where, tmp_path):
    text = "a; touch pwned && $(id) `id`"
    async with scenario(start_stack, request, where, tmp_path, ("say", {"text": text})) as run:
        (end,) = ends(await run.submit())
        assert not (run.work / "pwned").exists()
    assert end["output"].startswith(f"{text}|")


@BOTH
async def test_s6_9_template_injection_is_rejected_by_validation(
    start_stack, request, where, tmp_path
):
    call = ("kubectl_get", {"resource": "pods; rm -rf ~"})
    async with scenario(start_stack, request, where, tmp_path, call) as run:
        events = await run.submit()
    (end,) = ends(events)
    assert end["is_error"] and "must be one of: pods, services" in end["output"]
    assert not decisions(events), "rejected before the policy, never run"


@BOTH
async def test_s6_10_read_outside_allowed_paths_is_refused(start_stack, request, where, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    call = ("read_file", {"file_path": str(outside)})
    async with scenario(start_stack, request, where, tmp_path, call) as run:
        (end,) = ends(await run.submit(SessionConfig(policy="agent-loop-and-tool-system")))
    assert end["is_error"] and "outside the allowed paths" in end["output"]
    assert "secret" not in end["output"]


@BOTH
async def test_s6_11_denied_wins_over_allowed(start_stack, request, where, tmp_path):
    call = ("write_file", {"file_path": "private/key.txt", "content": "x"})
    async with scenario(start_stack, request, where, tmp_path, call) as run:
        (run.work / "private").mkdir()
        overrides = {"allowed_paths": ["."], "denied_paths": ["private"]}
        (end,) = ends(await run.submit(SessionConfig(policy_overrides=overrides)))
        assert not (run.work / "private" / "key.txt").exists()
    assert end["is_error"] and "denied path (private)" in end["output"]


@pytest.mark.parametrize("where", ["ssh"])  # locally: tests/wire/test_policy_paths.py
async def test_s6_12_symlink_out_of_allowed_paths_is_refused(start_stack, request, where, tmp_path):
    call = ("write_file", {"file_path": "etc-link/troupe-s612", "content": "x"})
    async with scenario(start_stack, request, where, tmp_path, call) as run:
        (run.work / "etc-link").symlink_to("/etc")
        (end,) = ends(await run.submit())
    assert end["is_error"] and "resolves to /etc/troupe-s612" in end["output"]
    assert not await trio.Path("/etc/troupe-s612").exists()


@BOTH
async def test_s6_13_declared_tool_variables_reach_the_command(
    start_stack, request, where, tmp_path, monkeypatch
):
    monkeypatch.setenv("S613_TOKEN", "t-613")
    async with scenario(start_stack, request, where, tmp_path, ("show_token", {})) as run:
        config = SessionConfig(policy="agent-loop-and-tool-system")  # allowlist mode
        (end,) = ends(await run.submit(config))
    assert end["output"].startswith("t-613\n")


async def test_s6_14_admin_tool_in_an_unattended_session(start_stack, request, tmp_path):
    calls = (("deploy", {}), ("deploy", {}))
    async with scenario(start_stack, request, "local", tmp_path, *calls) as run:
        blocked = await run.submit(SessionConfig(policy="unattended"))
        listed = await run.submit(
            SessionConfig(policy="unattended", policy_overrides={"allow": ["deploy"]})
        )
    (end,) = ends(blocked)
    assert end["is_error"] and "unattended" in end["output"]
    assert [d["action"] for d in decisions(blocked)] == ["deny"]
    (end,) = ends(listed)
    assert not end["is_error"] and end["output"].startswith("deployed\n")
    assert [(d["action"], d["rule"]) for d in decisions(listed)] == [("allow", "allow_list")]


async def test_a_bad_tools_file_is_a_warning_not_a_failed_session(start_stack, request, tmp_path):
    """Beside the scenarios: the README's promise for an unusable tools file."""
    async with scenario(start_stack, request, "local", tmp_path, shell("echo fine")) as run:
        (run.work / ".troupe" / "tools.yaml").write_text("tools: [ {name: x, cmd: y, bogus: 1} ]")
        events = await run.submit()
    warnings = [e.data for e in events if e.kind == "warning"]
    assert any("CLI tools not loaded" in w["message"] and "bogus" in w["message"] for w in warnings)
    (end,) = ends(events)
    assert end["output"].startswith("fine\n")
