"""Approvals, steering, abort, configuration and environment requests over the wire."""

from __future__ import annotations

import pytest
import trio

from protocol.client import RequestError
from protocol.wire import (
    AbortSession,
    CreateSession,
    ExecInEnvironment,
    ListEnvironments,
    RemoveEnvironment,
    ResolveApproval,
    SteerSession,
    SubmitInput,
    UpdateSessionConfig,
)
from tests.wire.conftest import HANG_GUARD, StartStack, events_until, shell_turns, subscribe


@pytest.fixture
def store(store_setting: str) -> str:
    """Every test here runs on SQLite and on PostgreSQL."""
    return store_setting


async def expect_error(code: str, client, kind, **fields) -> None:
    try:
        await client.request(kind, **fields)
    except RequestError as error:
        assert error.code == code, error
    else:
        raise AssertionError(f"{kind.__name__} succeeded")


async def test_pending_approvals_are_resent_and_resolved(start_stack: StartStack) -> None:
    async with start_stack() as stack:
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await events_until(client, "session_start")
        record = stack.server.registry.record(session)
        approvals = record.approvals
        assert approvals is not None
        decisions: list[tuple[bool, str | None]] = []

        async def policy() -> None:
            decisions.append(await approvals.request("command", "rm -rf build"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(policy)
            async with stack.client() as client:
                await subscribe(client, session)
                asked = await events_until(client, "approval_request")
                cursor = asked[-1].seq
            async with stack.client() as client:  # reconnects beyond the request
                await subscribe(client, session, after_seq=cursor)
                again = await events_until(client, "approval_request")
                assert again[-1].resent and again[-1].seq == cursor
                assert again[-1].data["subject"] == "rm -rf build"
                request_id = again[-1].data["request_id"]
                await expect_error("not_found", client, ResolveApproval, session=session,
                                   request_id="ap-unknown", approved=True)  # fmt: skip
                await client.request(
                    ResolveApproval, session=session, request_id=request_id, approved=False,
                    message="not today",
                )  # fmt: skip
                resolved = await events_until(client, "approval_resolved")
                assert resolved[-1].data["approved"] is False
        assert decisions == [(False, "not today")]


async def test_steer_config_abort_and_disconnect(start_stack: StartStack) -> None:
    script = shell_turns("sleep 0.3; echo a", "echo b", "echo c")
    async with start_stack(script) as stack:
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            updated = await client.request(UpdateSessionConfig, session=session, max_turns=50)
            assert updated.config.max_turns == 50
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="go")
            await events_until(client, "tool_call_start")
            await client.request(SteerSession, session=session, text="also check c")
        # Disconnected mid-input: the session carries on to the end.
        async with stack.client() as client:
            await subscribe(client, session)
            events = await events_until(client, "processing_end")
            steered = [e.data["content"] for e in events if e.kind == "steering_injected"]
            assert steered == ["also check c"]
            assert len([e for e in events if e.kind == "tool_call_end"]) == 3
            await client.request(AbortSession, session=session, reason="enough")
            end = await events_until(client, "session_end")
            assert end[-1].data["reason"] == "enough"
            await expect_error("session_closed", client, SubmitInput, session=session, text="x")


async def test_sessions_created_at_once_in_new_directories_each_get_an_environment(
    start_stack: StartStack,
) -> None:
    """Found by the security corpus: two creates at once picked the same
    ``local-N`` and one failed with 'address ... is already in use'."""
    async with start_stack() as stack, stack.client() as client:
        directories = [stack.work / f"d{index}" for index in range(6)]
        for directory in directories:
            directory.mkdir()
        created: dict[int, str] = {}

        async def create(index: int) -> None:
            # Directories 0-2 twice each: one environment per directory, not two.
            answer = await client.request(
                CreateSession, working_dir=str(directories[index % 3 if index >= 6 else index])
            )
            created[index] = answer.session.environment

        async with trio.open_nursery() as nursery:
            for index in range(9):
                nursery.start_soon(create, index)
        assert len(set(created[index] for index in range(6))) == 6
        for index in range(6, 9):
            assert created[index] == created[index % 3]


async def test_environment_requests(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        other = stack.work / "other"
        other.mkdir()
        created = await client.request(CreateSession, working_dir=str(other))
        environment = created.session.environment
        assert environment.startswith("/environments/local-")
        listed = await client.request(ListEnvironments)
        assert environment in [e.address for e in listed.environments]
        ran = await client.request(ExecInEnvironment, environment=environment, command="pwd")
        assert ran.result.stdout.strip() == str(other)
        timed = await client.request(
            ExecInEnvironment, environment=environment, command="sleep 5", timeout_ms=200
        )
        assert timed.result.timed_out
        await expect_error("not_found", client, ExecInEnvironment, environment="/environments/x",
                           command="true")  # fmt: skip
        await expect_error("not_found", client, ExecInEnvironment, environment="/sessions/s-1",
                           command="true")  # fmt: skip
        await expect_error("invalid_request", client, RemoveEnvironment,
                           environment="/environments/local")  # fmt: skip
        await expect_error("invalid_request", client, CreateSession, profile="nope")
        await expect_error("invalid_request", client, CreateSession, working_dir="/no/such/dir")
        with trio.fail_after(HANG_GUARD):
            await client.request(RemoveEnvironment, environment=environment)
        await expect_error("not_found", client, ExecInEnvironment, environment=environment,
                           command="true")  # fmt: skip
