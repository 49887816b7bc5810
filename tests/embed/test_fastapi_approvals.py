"""The FastAPI example's approval endpoint answering a real pending request.

No policy raises approvals yet, so the test raises one through the session's
Approvals on the runtime's thread (as the server's own tests do), with uvicorn
serving the example in this process so that the test can reach the SessionHost."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import httpx
import pytest

from tests.embed.conftest import HANG_GUARD, REPO
from tests.embed.sse import EventReader

uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")


def load_example():
    spec = importlib.util.spec_from_file_location(
        "fastapi_sessions_example", REPO / "examples" / "fastapi_sessions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_pending_approval_is_answered_over_http(
    work: Path, mock_llm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TROUPE_DATA_DIR", str(work / "data"))
    monkeypatch.setenv("TROUPE_WORKDIR", str(work / "work"))
    monkeypatch.setenv("TROUPE_BASE_URL", mock_llm)
    monkeypatch.setenv("TROUPE_API_KEY", "test-key")
    example = load_example()

    async def main() -> tuple[tuple[bool, str | None], list[str], int, bool]:
        config = uvicorn.Config(example.app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        try:
            while not server.started:  # noqa: ASYNC110 - uvicorn offers no event
                await asyncio.sleep(0.01)
            port = server.servers[0].sockets[0].getsockname()[1]
            host = example.app.state.troupe
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}", timeout=HANG_GUARD
            ) as client:
                session = (await client.post("/sessions", json={"text": "hello"})).json()["session"]

                async def ask() -> tuple[bool, str | None]:
                    approvals = host.sessions.services.registry.record(session).approvals
                    return await approvals.request("command", "make deploy")

                asked = asyncio.create_task(host.call(ask))
                async with client.stream("GET", f"/sessions/{session}/events") as response:
                    reader = EventReader(response)
                    request = (await reader.until("approval_request"))[-1]
                    request_id = request.data["data"]["request_id"]
                    pending = (await client.get(f"/sessions/{session}")).json()["pending"]
                    answer = await client.post(
                        f"/sessions/{session}/approvals/{request_id}",
                        json={"approved": True, "message": "go ahead"},
                    )
                    resolved = (await reader.until("approval_resolved"))[-1]
                approved = resolved.data["data"]["approved"]
                pending_ids = [event["data"]["request_id"] for event in pending]
                return await asked, pending_ids, answer.status_code, approved
        finally:
            server.should_exit = True
            await serving

    decision, pending, status, approved = asyncio.run(asyncio.wait_for(main(), HANG_GUARD))
    assert status == 200 and approved is True
    assert decision == (True, "go ahead")
    assert len(pending) == 1
