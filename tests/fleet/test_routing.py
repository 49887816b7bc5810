"""Any node answers any client (issue 37): a steer, an approval answer and an
abort sent to node A for a session that node B runs take effect there (they go
through the store's inbox to B; B keeps the session, its lease untouched)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import AbortSession, ResolveApproval, SteerSession
from tests.fleet.conftest import TOKEN, Follower, fleet, lease_of
from tests.fleet.test_failover import _create, _submit
from tests.waiting import wait_until


def _script() -> Script:
    slow = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": f"echo step {n}"}}],
         "delay": 0.1}
        for n in range(20)
    ]  # fmt: skip
    asks = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -rf build"}}]},
        {"text": "Cleaned."},
    ]
    return msgspec.convert(
        {"conversations": [{"match": "keep going", "turns": [*slow, {"text": "Done."}]},
                           {"match": "clean up", "turns": asks}]},
        Script,
    )  # fmt: skip


def _has(kind: str) -> object:
    return lambda f: any(e.kind == kind for e in f.received)


async def test_steer_approval_and_abort_through_another_node(
    tmp_path: Path, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    url = postgres_url
    async with (
        serve_mock_llm(_script()) as mock,
        fleet(root, url, mock.base_url, 2) as (a, b),
        trio.open_nursery() as nursery,
    ):
        (root / "work" / "build").mkdir()
        steered, asking, aborted = await _create(b, 3)
        followers = {s: Follower(s, [a]) for s in (steered, asking, aborted)}
        for follower in followers.values():
            nursery.start_soon(follower.run)
        await _submit(b, steered, "keep going")
        await _submit(b, asking, "clean up")
        await _submit(b, aborted, "keep going")
        for session in (steered, aborted):
            await followers[session].wait_for(_has("tool_call_start"), "a running tool")
        await followers[asking].wait_for(_has("approval_request"), "the approval request")

        async with connect(a.url, TOKEN) as client:
            await client.request(SteerSession, session=steered, text="mind the tests")
            request = next(e for e in followers[asking].received if e.kind == "approval_request")
            await client.request(
                ResolveApproval, session=asking, request_id=request.data["request_id"],
                approved=True,
            )  # fmt: skip
            await client.request(AbortSession, session=aborted, reason="enough")

        await followers[steered].wait_for(_has("steering_injected"), "the steer to be injected")
        injected = next(e for e in followers[steered].received if e.kind == "steering_injected")
        assert injected.data["content"] == "mind the tests"
        await followers[asking].wait_for(_has("processing_end"), "the approved input to end")
        decisions = [e.data for e in followers[asking].received if e.kind == "policy_decision"]
        assert [(d["action"], d["decided_by"]) for d in decisions] == [("allow", "client")]
        assert not (root / "work" / "build").exists()
        await followers[aborted].wait_for(_has("session_end"), "the session to end")
        # B ran them all along: nothing was taken over.
        for session in (steered, asking, aborted):
            assert lease_of(url, session) == (b.name, 1)
        nursery.cancel_scope.cancel()


async def test_an_open_approval_is_asked_again_after_a_take_over(
    tmp_path: Path, postgres_url: str
) -> None:
    """The owner dies while its session waits for an approval: another node takes
    the session over with the approval still open, a subscriber arriving past
    the request gets it again (``resent``), and its answer, sent to a third node,
    reaches the new owner."""
    root = Path(await trio.Path(tmp_path).resolve())
    url = postgres_url
    async with (
        serve_mock_llm(_script()) as mock,
        fleet(root, url, mock.base_url, 3) as (owner, second, third),
        trio.open_nursery() as nursery,
    ):
        (root / "work" / "build").mkdir()
        (session,) = await _create(owner, 1)
        early = Follower(session, [second, third])
        nursery.start_soon(early.run)
        await _submit(owner, session, "clean up")
        await early.wait_for(_has("approval_request"), "the approval request")
        request = next(e for e in early.received if e.kind == "approval_request")
        owner.kill()
        await owner.process.wait()
        await wait_until(
            lambda: (lease_of(url, session) or ("",))[0] not in ("", owner.name),
            what="another node to take the session over",
        )

        late = Follower(session, [third, second], "msgpack")
        late.received.append(request)  # it has seen everything up to the request
        nursery.start_soon(late.run)
        await late.wait_for(lambda f: any(e.resent for e in f.received), "the request again")
        again = next(e for e in late.received if e.resent)
        assert again.kind == "approval_request"
        assert again.data["request_id"] == request.data["request_id"]

        async with connect(third.url, TOKEN) as client:
            await client.request(
                ResolveApproval, session=session, request_id=request.data["request_id"],
                approved=True,
            )  # fmt: skip
        await early.wait_for(_has("processing_end"), "the approved round to end")
        ended = next(e for e in early.received if e.kind == "processing_end")
        assert ended.data["interrupted"] is False
        assert not (root / "work" / "build").exists()
        nursery.cancel_scope.cancel()
