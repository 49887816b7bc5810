"""Each finding of the property-based fuzzer (issue 20, item 3 and 4), as a named
regression test over real connections: the bad request gets a typed error (never
``internal``), and afterwards the environment and the session still answer."""

from __future__ import annotations

import anyio
import pytest
import trio

from actors.session.actor import SessionActor
from protocol.client import RequestError, connect
from protocol.session import UpdateConfig
from protocol.wire import (
    CreateSession,
    ExecInEnvironment,
    GetSession,
    ListEnvironments,
    ListSessions,
    ReadEnvironmentFile,
    ResolveApproval,
    SubmitInput,
    UnsubscribeSession,
    UpdateSessionConfig,
    WriteEnvironmentFile,
)
from tests.wire.conftest import (
    BOTH_STORES,
    HANG_GUARD,
    StartStack,
    events_until,
    shell_turns,
    subscribe,
)
from tests.wire.test_requests import expect_error


async def assert_local_environment_answers(client) -> None:
    environments = await client.request(ListEnvironments)
    assert "/environments/local" in [e.address for e in environments.environments]
    done = await client.request(ExecInEnvironment, environment="local", command="echo alive")
    assert done.result.stdout == "alive\n"
    await client.request(WriteEnvironmentFile, environment="local", path="ok.txt", content="ok")
    read = await client.request(ReadEnvironmentFile, environment="local", path="ok.txt")
    assert read.content.text == "1 | ok"


async def assert_session_answers(client, session: str) -> None:
    await subscribe(client, session)
    await client.request(SubmitInput, session=session, text="still there?")
    events = await events_until(client, "processing_end")
    assert [e.data["is_error"] for e in events if e.kind == "tool_call_end"][-1] is False


BAD_ENVIRONMENT_REQUESTS = [
    ("write_file_nul_path", WriteEnvironmentFile, {"path": "a\x00b.txt", "content": "x"}),
    ("read_file_nul_path", ReadEnvironmentFile, {"path": "a\x00b.txt"}),
    ("exec_nul_working_dir", ExecInEnvironment, {"command": "true", "working_dir": "w\x00"}),
    ("write_file_300_char_name", WriteEnvironmentFile, {"path": "n" * 300, "content": "x"}),
    ("read_file_300_char_name", ReadEnvironmentFile, {"path": "n" * 300}),
    ("write_file_parent_is_a_file", WriteEnvironmentFile, {"path": "f.txt/c", "content": "x"}),
    ("exec_working_dir_is_a_file", ExecInEnvironment, {"command": "true", "working_dir": "f.txt"}),
]


@pytest.mark.parametrize(("kind", "fields"), [c[1:] for c in BAD_ENVIRONMENT_REQUESTS],
                         ids=[c[0] for c in BAD_ENVIRONMENT_REQUESTS])  # fmt: skip
async def test_a_bad_path_never_removes_the_local_environment(
    start_stack: StartStack, kind, fields
) -> None:
    async with start_stack(shell_turns("echo hi")) as stack, stack.client() as client:
        (stack.work / "f.txt").write_text("a file\n")
        session = (await client.request(CreateSession)).session.session_id
        with trio.fail_after(HANG_GUARD):
            with pytest.raises(RequestError) as refused:
                await client.request(kind, environment="local", **fields)
            assert refused.value.code not in ("internal", "not_found", "unavailable")
            await assert_local_environment_answers(client)
            await assert_session_answers(client, session)
        assert not stack.server.runtime.restarts  # refused, not crashed and restarted


@pytest.mark.parametrize("path", ["a\x00b.txt", "n" * 300 + ".txt", "f.txt/child.txt"],
                         ids=["nul", "long_name", "parent_is_a_file"])  # fmt: skip
async def test_a_models_bad_write_file_call_is_an_error_result(
    start_stack: StartStack, path: str
) -> None:
    script = {
        "turns": [
            {"tool_calls": [{"name": "write_file", "arguments": {"file_path": path,
                                                                 "content": "x"}}]},
            {"text": "tried"},
        ],
        "repeat": True,
    }  # fmt: skip
    async with start_stack(script) as stack, stack.client() as client:
        (stack.work / "f.txt").write_text("a file\n")
        session = (await client.request(CreateSession)).session.session_id
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="write it")
        events = await events_until(client, "processing_end")
        ends = [e for e in events if e.kind == "tool_call_end"]
        assert ends and ends[0].data["is_error"] is True
        assert "internal" not in ends[0].data["output"].lower()
        await client.request(SubmitInput, session=session, text="again")
        again = await events_until(client, "processing_end")
        assert again[-1].data["state"] == "idle"
        await assert_local_environment_answers(client)


async def test_an_integer_too_large_for_msgpack_never_closes_msgpack_connections(
    start_stack: StartStack,
) -> None:
    async with start_stack() as stack, stack.client(encoding="msgpack") as packed:
        async with stack.client() as text:
            with pytest.raises(RequestError) as refused:
                await text.request(CreateSession, config={"max_turns": 2**64})
            assert refused.value.code == "invalid_request"
            await text.request(CreateSession, config={"max_turns": 2**63 - 1})
        with trio.fail_after(HANG_GUARD):
            sessions = (await packed.request(ListSessions)).sessions
            assert [s.config.max_turns for s in sessions] == [2**63 - 1]
            await packed.request(GetSession, session=sessions[0].session_id)


@pytest.mark.parametrize("model", ["a\bb", "has space", "x?y", "", "é" * 3])
async def test_a_model_name_that_is_not_a_url_part_is_refused(
    start_stack: StartStack, model: str
) -> None:
    async with start_stack(shell_turns("echo hi")) as stack, stack.client() as client:
        await expect_error("invalid_request", client, CreateSession, config={"model": model})
        session = (await client.request(CreateSession)).session.session_id
        await expect_error("invalid_request", client, UpdateSessionConfig, session=session,
                           model=model)  # fmt: skip
        await assert_session_answers(client, session)


async def test_a_bad_model_name_from_inside_is_an_error_event_not_a_dead_session(
    start_stack: StartStack,
) -> None:
    """Past the wire's validation (an embedding program, a profile): Gemini puts the
    model in the URL, which cannot be built; that is a typed model error the loop
    reports, and the session goes on."""
    script = {"turns": [{"text": "fine"}], "repeat": True}
    async with start_stack(script) as stack, stack.client() as client:
        created = await client.request(CreateSession, profile="gemini")
        session = created.session.session_id
        ref = (await stack.server.registry.live(session)).ref  # its actor, started now
        assert ref is not None  # a live session has its actor
        await ref.ask(UpdateConfig(model="a\bb"))
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="go")
        events = await events_until(client, "processing_end")
        errors = [e for e in events if e.kind == "error"]
        assert errors and errors[0].data["error_type"] == "ConfigurationError"
        await ref.ask(UpdateConfig(model="gemini-test"))
        await client.request(SubmitInput, session=session, text="again")
        again = await events_until(client, "processing_end")
        assert "error" not in [e.kind for e in again]
        assert [e.data["text"] for e in again if e.kind == "assistant_text_end"] == ["fine"]


async def test_a_session_actor_that_fails_ends_with_error_and_session_end(
    start_stack: StartStack,
) -> None:
    """A setting of the wrong type set from inside (the wire refuses it) makes the
    loop raise: the actor fails, and its subscribers hear why and that it ended."""
    async with start_stack(shell_turns("echo hi")) as stack, stack.client() as client:
        session = (await client.request(CreateSession)).session.session_id
        record = await stack.server.registry.live(session)  # its actor, started now
        assert isinstance(record.actor, SessionActor)
        await record.ref.ask(UpdateConfig(max_turns="many"))  # type: ignore[arg-type]
        await subscribe(client, session)
        await client.request(SubmitInput, session=session, text="go")
        events = await events_until(client, "session_end")
        assert "error" in [e.kind for e in events]
        assert events[-1].data["state"] == "closed"
        detail = await client.request(GetSession, session=session)
        assert detail.session.state == "closed"
        seqs = [e.seq for e in events]
        assert seqs == sorted(set(seqs))
    async with start_stack(shell_turns("echo hi")) as stack, stack.client() as client:
        await subscribe(client, session)  # after a restart: the end is stored
        replayed = await events_until(client, "session_end")
        assert [e.seq for e in replayed] == seqs


def pending_events(client) -> list:
    """Events the client has received and not yet read (never waits)."""
    found = []
    while True:
        try:
            found.append(client._receive_events.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream, trio.WouldBlock, trio.EndOfChannel):
            return found


@pytest.mark.parametrize("second", ["/sessions/{id}", "{id}"], ids=["by_address", "twice"])
async def test_a_second_subscribe_replaces_the_first(start_stack: StartStack, second: str) -> None:
    async with start_stack(shell_turns("echo one")) as stack, stack.client() as client:
        created = (await client.request(CreateSession)).session
        session, cursor = created.session_id, created.last_seq
        async with trio.open_nursery() as nursery:  # both without waiting for the first
            nursery.start_soon(subscribe, client, session, cursor)
            nursery.start_soon(subscribe, client, second.format(id=session), cursor)
        await client.request(SubmitInput, session=session, text="go")
        events = await events_until(client, "processing_end")
        seqs = [e.seq for e in events]
        assert len(seqs) == len(set(seqs)), [(e.seq, e.kind) for e in events]
        await client.request(ListSessions)
        assert [e.seq for e in pending_events(client) if e.seq <= seqs[-1]] == []


async def test_unsubscribe_stops_delivery_before_it_answers(start_stack: StartStack) -> None:
    script = shell_turns("echo one", "echo two")
    async with start_stack(script) as stack, stack.client() as client, stack.client() as watcher:
        session = (await client.request(CreateSession)).session.session_id
        await subscribe(client, session)
        await subscribe(watcher, session)
        await client.request(SubmitInput, session=session, text="go")
        await events_until(client, "tool_call_start")
        await client.request(UnsubscribeSession, session=f"/sessions/{session}")
        pending_events(client)  # sent before the answer: fine
        await events_until(watcher, "processing_end")
        await client.request(ListSessions)  # a round trip after the session is done
        assert pending_events(client) == []


async def test_update_config_on_a_closed_session_is_refused(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        created = (await client.request(CreateSession)).session
        from protocol.wire import AbortSession

        await client.request(AbortSession, session=created.session_id)
        await expect_error("session_closed", client, UpdateSessionConfig,
                           session=created.session_id, model="other-model")  # fmt: skip
        detail = await client.request(GetSession, session=created.session_id)
        assert detail.session.model == created.model


@BOTH_STORES
async def test_resolve_approval_on_a_stored_session_is_not_found(start_stack: StartStack) -> None:
    async with start_stack() as stack, stack.client() as client:
        session = (await client.request(CreateSession)).session.session_id
    async with start_stack() as stack, stack.client() as client:
        detail = await client.request(GetSession, session=session)
        assert detail.session.status == "stored"  # not running
        await expect_error("not_found", client, ResolveApproval, session=session,
                           request_id="ap-1", approved=True)  # fmt: skip


async def test_a_wrong_token_in_hello_is_called_wrong(start_stack: StartStack) -> None:
    from protocol.client import ConnectionRefused

    async with start_stack() as stack:
        with pytest.raises(ConnectionRefused) as refused:
            async with connect(stack.url, "not-the-token", header_token=False):
                pass
        assert refused.value.code == "unauthorized"
        assert "not valid" in str(refused.value)


@BOTH_STORES
async def test_a_stored_value_msgpack_cannot_carry_fails_the_reply_not_the_connection(
    start_stack: StartStack,
) -> None:
    """A database written before the decoder's checks may hold one: the msgpack
    client gets an error for that request and its connection goes on."""
    from protocol.session import SessionConfig

    async with start_stack() as stack:
        stack.server.store.put_session(
            "s-legacy", "openai", "gpt-test", "/environments/local", None,
            SessionConfig(max_turns=2**64),
        )  # fmt: skip
    async with start_stack() as stack, stack.client(encoding="msgpack") as packed:
        with pytest.raises(RequestError) as refused:
            await packed.request(ListSessions)
        assert "msgpack" in str(refused.value)
        environments = await packed.request(ListEnvironments)
        assert environments.environments
        async with stack.client() as text:
            listed = await text.request(ListSessions)
            assert [s.session_id for s in listed.sessions] == ["s-legacy"]


@pytest.mark.parametrize("working_dir", ["n" * 300, "/tmp/" + "d/" * 3000, "w\x00", "/etc/passwd"],
                         ids=["long_name", "long_path", "nul", "a_file"])  # fmt: skip
async def test_a_bad_session_working_dir_is_refused_not_internal(
    start_stack: StartStack, working_dir: str
) -> None:
    async with start_stack() as stack, stack.client() as client:
        await expect_error("invalid_request", client, CreateSession, working_dir=working_dir)
        await assert_local_environment_answers(client)
