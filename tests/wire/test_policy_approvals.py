"""Approvals end to end: a scripted model asks for ``rm -rf build`` over loopback
HTTP, the session raises the request, a real WebSocket client answers it."""

from __future__ import annotations

from typing import Any

from protocol.session import SessionConfig
from protocol.wire import CreateSession, GetSession, ResolveApproval, SubmitInput
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe


def _kinds(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.kind == kind]


async def test_deny_then_approve_for_session_then_no_question(start_stack: StartStack) -> None:
    script = shell_turns("rm -rf build", "rm -rf build", "rm -rf build")
    script["repeat"] = False
    async with start_stack(script) as stack:
        (stack.work / "build").mkdir()
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            seen = await events_until(client, "approval_request")
            asked = seen[-1].data
            assert (asked["action"], asked["subject"]) == ("command", "rm -rf build")
            await client.request(ResolveApproval, session=session,
                                 request_id=asked["request_id"], approved=False,
                                 message="keep the build")  # fmt: skip
            seen = await events_until(client, "approval_request")
            ended = _kinds(seen, "tool_call_end")
            assert ended[0].data["is_error"] is True
            assert "not approved: keep the build" in ended[0].data["output"]
            assert (stack.work / "build").exists()
            second = seen[-1].data
            await client.request(ResolveApproval, session=session,
                                 request_id=second["request_id"], approved=True,
                                 scope="command")  # fmt: skip
            seen = await events_until(client, "processing_end")
            assert not _kinds(seen, "approval_request"), "the grant covers the third rm -rf"
            decisions = [event.data for event in _kinds(seen, "policy_decision")]
            assert [(d["action"], d["decided_by"]) for d in decisions] == [
                ("allow", "client"),
                ("allow", "grant"),
            ]
            assert not (stack.work / "build").exists()
        # The model read the denial: the second model request carries it.
        bodies = [request.body.decode() for request in stack.mock.requests]
        assert any("keep the build" in body for body in bodies[1:])


async def test_unattended_denies_at_once(start_stack: StartStack) -> None:
    script = shell_turns("rm -rf build")
    script["repeat"] = False
    async with start_stack(script) as stack:
        (stack.work / "build").mkdir()
        async with stack.client() as client:
            config = SessionConfig(policy="unattended")
            session = (await client.request(CreateSession, config=config)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            seen = await events_until(client, "processing_end")
            assert not _kinds(seen, "approval_request")
            decision = _kinds(seen, "policy_decision")[0].data
            assert decision["action"] == "deny"
            assert "an unattended session" in _kinds(seen, "tool_call_end")[0].data["output"]
            assert (stack.work / "build").exists()


async def test_unanswered_request_times_out_as_denial(start_stack: StartStack) -> None:
    script = shell_turns("rm -rf build")
    script["repeat"] = False
    async with start_stack(script) as stack:
        (stack.work / "build").mkdir()
        async with stack.client() as client:
            config = SessionConfig(policy_overrides={"approval_timeout_s": 0.2})
            session = (await client.request(CreateSession, config=config)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            seen = await events_until(client, "processing_end")
            resolved = _kinds(seen, "approval_resolved")[0].data
            assert (resolved["approved"], resolved["by"]) == (False, "timeout")
            assert (stack.work / "build").exists()


async def test_always_is_that_command_not_a_prefix(start_stack: StartStack) -> None:
    """Issue 30: after "always" for ``rm -rf build``, ``rm -rf ../elsewhere`` asks."""
    script = shell_turns("rm -rf build", "rm -rf ../elsewhere")
    script["repeat"] = False
    async with start_stack(script) as stack:
        (stack.work / "build").mkdir()
        elsewhere = stack.work.parent / "elsewhere"
        elsewhere.mkdir()
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            first = (await events_until(client, "approval_request"))[-1].data
            assert first["details"]["always"] == f"exactly `rm -rf build` in {stack.work}"
            assert first["details"]["rule"] is None  # no wider rule for an admin line
            await client.request(ResolveApproval, session=session,
                                 request_id=first["request_id"], approved=True,
                                 scope="command")  # fmt: skip
            second = (await events_until(client, "approval_request"))[-1].data
            assert second["subject"] == "rm -rf ../elsewhere"
            await client.request(ResolveApproval, session=session,
                                 request_id=second["request_id"], approved=False)  # fmt: skip
            await events_until(client, "processing_end")
        assert not (stack.work / "build").exists()
        assert elsewhere.exists()


async def test_waiting_for_an_answer_is_the_waiting_approval_loop_state(
    start_stack: StartStack,
) -> None:
    """coding-agent-loop-spec's WAITING_APPROVAL: a ``loop_state`` event while the
    session waits for the answer, shown by ``get_session`` too, and back to
    running the tool once answered."""
    script = shell_turns("rm -rf build")
    script["repeat"] = False
    async with start_stack(script) as stack:
        (stack.work / "build").mkdir()
        async with stack.client() as client:
            session = (await client.request(CreateSession)).session.session_id
            await subscribe(client, session)
            await client.request(SubmitInput, session=session, text="clean up")
            seen = await events_until(client, "approval_request")
            seen = await events_until(client, "loop_state", into=seen)
            assert seen[-1].data["state"] == "waiting_approval"
            detail = await client.request(GetSession, session=session)
            assert detail.session.loop_state == "waiting_approval"
            asked = _kinds(seen, "approval_request")[0].data
            await client.request(ResolveApproval, session=session,
                                 request_id=asked["request_id"], approved=True)  # fmt: skip
            seen = await events_until(client, "processing_end", into=seen)
        states = [event.data["state"] for event in _kinds(seen, "loop_state")]
        assert states == [
            "thinking", "executing_tool", "waiting_approval", "executing_tool",
            "thinking", "completed",
        ]  # fmt: skip
        assert not (stack.work / "build").exists()
