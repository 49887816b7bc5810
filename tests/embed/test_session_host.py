"""Sessions in process for asyncio code: a SessionHost against ``troupe mock-llm``,
driven with the WebSocket protocol's own request types."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from actors.embed import HostConfig, SessionHost
from actors.server.models import ModelSettings
from protocol.client import RequestError
from protocol.wire import (
    AbortSession,
    CreateSession,
    Event,
    GetSession,
    ResolveApproval,
    SessionDetail,
    SubmitInput,
)
from tests.embed.conftest import HANG_GUARD, kill_group, running_in_group
from tests.environments.helpers import command_group


def config(work: Path, base_url: str) -> HostConfig:
    return HostConfig(
        data_dir=work / "data",
        working_dir=work / "work",
        models=ModelSettings("openai", base_url, "test-key"),
        grace=1.0,
    )


async def until(events, *kinds: str, into: list[Event]) -> list[Event]:
    async for event in events:
        into.append(event)
        if event.kind in kinds:
            return into
    raise AssertionError(f"events ended before {kinds}: {[e.kind for e in into]}")


def test_a_session_runs_to_completion(work: Path, mock_llm: str) -> None:
    async def main() -> tuple[list[Event], list[Event], SessionDetail]:
        async with SessionHost(config(work, mock_llm)) as host:
            session = (await host.request(CreateSession)).session.session_id
            await host.request(SubmitInput, session=session, text="quick one please")
            seen = await until(host.events(session), "processing_end", into=[])
            again = await until(host.events(session, after_seq=2), "processing_end", into=[])
            detail = await host.request(GetSession, session=session)
            return seen, again, detail

    seen, again, detail = asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    kinds = [event.kind for event in seen]
    assert kinds[0] == "session_start" and "tool_call_end" in kinds
    output = next(e for e in seen if e.kind == "tool_call_end").data["output"]
    assert "hello from troupe" in output
    assert seen[-1].data.get("state") == "idle"
    assert again[0].seq == 3  # resumed after the cursor, no gap
    assert len(detail.history) >= 3


def test_errors_have_the_servers_codes(work: Path, mock_llm: str) -> None:
    async def main() -> None:
        async with SessionHost(config(work, mock_llm)) as host:
            with pytest.raises(RequestError) as missing:
                await host.request(SubmitInput, session="s-nope", text="hi")
            assert missing.value.code == "not_found"
            with pytest.raises(RequestError) as unknown:
                async for _ in host.events("s-nope"):
                    pass
            assert unknown.value.code == "not_found"
            with pytest.raises(RequestError) as profile:
                await host.request(CreateSession, profile="nonesuch")
            assert profile.value.code == "invalid_request"

    asyncio.run(asyncio.wait_for(main(), HANG_GUARD))


def test_leaving_a_subscription_cancels_nothing_and_abort_kills(work: Path, mock_llm: str) -> None:
    pid_file = work / "work" / "slow.pid"

    async def main() -> tuple[int, list[str], list[str]]:
        async with SessionHost(config(work, mock_llm)) as host:
            late = (await host.request(CreateSession)).session.session_id
            await host.request(SubmitInput, session=late, text="late one")
            await until(host.events(late), "tool_call_start", into=[])  # and leave
            finished = await until(host.events(late), "processing_end", into=[])

            slow = (await host.request(CreateSession)).session.session_id
            await host.request(SubmitInput, session=slow, text="slow one")
            await until(host.events(slow), "tool_call_start", into=[])
            while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            pid = command_group(pid_file.parent)  # the file's pid is the sandbox's own
            assert pid is not None and running_in_group(pid)
            await host.request(AbortSession, session=slow, reason="enough")
            ended = await until(host.events(slow, after_seq=0), "session_end", into=[])
            return pid, [e.kind for e in finished], [e.kind for e in ended]

    try:
        pid, finished, ended = asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    finally:
        kill_group(pid_file)
    assert (work / "work" / "late.txt").read_text() == "finished\n"
    assert "tool_call_end" in finished
    assert ended[-1] == "session_end"
    assert running_in_group(pid) == []


def test_the_kernel_face_subscribes_to_a_session(work: Path, mock_llm: str) -> None:
    async def main() -> list[str]:
        async with SessionHost(config(work, mock_llm)) as host:
            session = (await host.request(CreateSession)).session.session_id
            ref = await host.ref(f"/sessions/{session}")
            kinds: list[str] = []
            events = ref.subscribe(after_seq=0)
            await host.request(SubmitInput, session=session, text="quick again")
            async for event in events:
                kinds.append(event.kind)
                if event.kind == "processing_end":
                    break
            return kinds

    kinds = asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    assert kinds[0] == "session_start" and kinds[-1] == "processing_end"


def test_approvals_reach_the_reader_and_are_answered(work: Path, mock_llm: str) -> None:
    """No policy raises approvals yet; as the server's tests do, the test raises one
    through the session's Approvals on the runtime's thread."""

    async def main() -> tuple[tuple[bool, str | None], list[Event]]:
        async with SessionHost(config(work, mock_llm)) as host:
            session = (await host.request(CreateSession)).session.session_id

            async def ask() -> tuple[bool, str | None]:
                approvals = host.sessions.services.registry.record(session).approvals
                assert approvals is not None
                return await approvals.request("command", "rm -rf build")

            asked = asyncio.create_task(host.call(ask))
            events = host.events(session)
            seen = await until(events, "approval_request", into=[])
            request_id = seen[-1].data["request_id"]
            await host.request(
                ResolveApproval, session=session, request_id=request_id, approved=False,
                message="not today",
            )  # fmt: skip
            await until(events, "approval_resolved", into=seen)
            await events.aclose()
            return await asked, seen

    decision, seen = asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    assert decision == (False, "not today")
    assert seen[-1].data["approved"] is False


def test_a_host_that_cannot_open_says_why(work: Path, mock_llm: str) -> None:
    (work / "not-a-directory").write_text("a file where the data directory should be")
    bad = HostConfig(data_dir=work / "not-a-directory", working_dir=work / "work")

    async def main() -> None:
        async with SessionHost(bad):
            raise AssertionError("opened on a file")

    with pytest.raises(OSError) as raised:
        asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    assert not isinstance(raised.value, BaseExceptionGroup)
    assert not [t for t in threading.enumerate() if t.name == "troupe-sessions"]


def test_a_host_cancelled_while_starting_still_stops(work: Path, mock_llm: str) -> None:
    async def main() -> None:
        host = SessionHost(config(work, mock_llm))
        opening = asyncio.create_task(host.__aenter__())
        await asyncio.sleep(0)
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening
        assert not host.running

    asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    assert not [t for t in threading.enumerate() if t.name == "troupe-sessions"]
