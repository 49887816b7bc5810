"""The commands as people run them: real processes against real servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import trio

from actors.commands.interact import Follower
from actors.mockllm import Script, serve_mock_llm
from protocol.wire import AbortSession, CreateSession
from tests.waiting import wait_until
from tests.wire.conftest import REPO, StartStack, events_until, shell_turns, subscribe


async def troupe(*args: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "actors.cli", *args],
            capture_stdout=True, capture_stderr=True, check=False, cwd=REPO,
        )  # fmt: skip


async def test_schema_describes_every_frame() -> None:
    done = await troupe("schema")
    schema = json.loads(done.stdout)
    assert schema["protocol_version"] == 1
    for name in ("Hello", "CreateSession", "SubscribeSession", "Event", "ErrorReply"):
        assert name in schema["$defs"]


async def test_run_embedded_exit_codes_and_sessions(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    script = msgspec.convert(shell_turns("echo ran-it", final="Finished."), Script)
    async with serve_mock_llm(script) as mock:
        common = ["--data-dir", data, "--workdir", str(tmp_path), "--base-url", mock.base_url]
        done = await troupe("run", *common, "--output-format", "json", "do it")
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout.decode().splitlines()[-1])
        assert (summary["status"], summary["result"]) == ("done", "Finished.")

        forever = msgspec.convert({"turns": shell_turns("echo again")["turns"][:1]}, Script)
        async with serve_mock_llm(forever) as looping:
            limited = await troupe(
                "run", *common[:4], "--base-url", looping.base_url, "--max-turns", "1", "loop"
            )
        assert limited.returncode == 53, limited.stdout
        assert b"turn limit" in limited.stdout

        streamed = await troupe("run", *common, "--output-format", "stream-json", "again")
        lines = [json.loads(line) for line in streamed.stdout.decode().splitlines()]
        assert lines[-1]["type"] == "result" and lines[0]["type"] == "event"

        assert (await troupe("run", *common, "  ")).returncode == 2
        listed = await troupe("sessions", "--data-dir", data, "--json")
        sessions = [json.loads(line) for line in listed.stdout.decode().splitlines()]
        assert len(sessions) == 3 and {s["status"] for s in sessions} == {"stored"}
    unreachable = await troupe("run", "--connect", "ws://127.0.0.1:9/", "--token", "t", "x")
    assert unreachable.returncode == 1


async def test_run_connect_attach_and_sessions(start_stack: StartStack) -> None:
    async with start_stack(shell_turns("echo via-server", final="Server side done.")) as stack:
        token = ["--connect", stack.url, "--token", stack.token]
        done = await troupe("run", *token, "--output-format", "json", "remote task")
        assert done.returncode == 0, done.stderr
        session = json.loads(done.stdout.decode().splitlines()[-1])["session_id"]
        listed = await troupe("sessions", *token)
        assert session in listed.stdout.decode()
        async with stack.client() as client:
            await client.request(AbortSession, session=session, reason="finished")
        attached = await troupe("attach", session, *token)
        out = attached.stdout.decode()
        assert attached.returncode == 0, attached.stderr
        assert "via-server" in out and "Server side done." in out and "finished" in out


async def test_demo_runs() -> None:
    done = await troupe("demo", "--pace", "0")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert out.count("subagent completed") == 3
    assert out.splitlines()[-1].startswith("done in ")


async def test_typed_lines_steer_stop_and_approve(start_stack: StartStack) -> None:
    steps = [f"sleep 0.2; echo step-{n}" for n in range(8)]
    async with start_stack(shell_turns(*steps)) as stack, stack.client() as client:
        session = (await client.request(CreateSession)).session.session_id
        follower = Follower(client, session, "json")
        async with trio.open_nursery() as nursery:

            async def type_lines() -> None:
                async with stack.client() as watcher:
                    await subscribe(watcher, session)
                    await events_until(watcher, "tool_call_start")
                    await follower.typed("mind the tests")
                    await events_until(watcher, "steering_injected")
                    await follower.typed("please stop now")

            nursery.start_soon(type_lines)
            outcome = await follower.run("many steps")
        assert (outcome.status, outcome.exit_code) == ("stopped", 0)
        assert 2 <= outcome.iterations < len(steps)

        record = stack.server.registry.record(session)
        assert record.state == "idle"  # interrupted, not closed
        approvals = record.approvals
        assert approvals is not None
        answered: list[tuple[bool, str | None]] = []

        async def ask() -> None:
            answered.append(await approvals.request("command", "make deploy"))

        async with stack.client() as other:
            await subscribe(other, session)
            approver = Follower(other, session, "json", until=("approval_resolved",))
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask)
                async with stack.client() as watcher:
                    await subscribe(watcher, session)
                    nursery.start_soon(approver.run, None)
                    await events_until(watcher, "approval_request")
                    await wait_until(
                        lambda: bool(approver.outcome.pending_approvals),
                        what="the approver to see the request",
                    )
                    await approver.typed("yes")
        assert answered == [(True, None)]
