"""A shared service actor that fails anyway is restarted by its supervisor with its
state, and the sessions that use it are told (issue 20)."""

from __future__ import annotations

from protocol.wire import CreateSession, ExecInEnvironment, ListEnvironments, SubmitInput
from tests.wire.conftest import StartStack, events_until, shell_turns, subscribe


async def test_a_failed_local_environment_is_restarted_and_sessions_hear_of_it(
    start_stack: StartStack,
) -> None:
    async with start_stack(shell_turns("echo still here")) as stack, stack.client() as client:
        created = (await client.request(CreateSession)).session
        session = created.session_id
        await subscribe(client, session, after_seq=created.last_seq)
        local = stack.server.runtime.ref("/environments/local")
        # Fail it through the kernel's own failure path (what an unexpected
        # exception in one of its requests does).
        local._cell.record_failure(OSError("the disk is on fire"))
        warning = (await events_until(client, "service_restarted"))[-1]
        assert warning.data["address"] == "/environments/local"
        assert warning.data["error_type"] == "OSError"
        assert warning.data["restarts"] == 1
        listed = await client.request(ListEnvironments)
        assert "/environments/local" in [e.address for e in listed.environments]
        done = await client.request(ExecInEnvironment, environment="local", command="echo ok")
        assert done.result.stdout == "ok\n"
        await client.request(SubmitInput, session=session, text="go")
        events = await events_until(client, "processing_end")
        ends = [e for e in events if e.kind == "tool_call_end"]
        assert ends and not ends[0].data["is_error"]
        assert "still here" in ends[0].data["output"]
        assert [n.address for n in stack.server.runtime.restarts] == ["/environments/local"]
