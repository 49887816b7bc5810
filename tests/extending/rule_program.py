"""Run by test_policy_rule.py: a real session (the scripted model over loopback
HTTP, a real gateway, a LocalEnvironment) whose model writes
``deps.lock`` and then ``notes.txt`` in the directory given, with the session
settings given as JSON (a policy preset, policy overrides).
Prints what happened as JSON: each call's policy decision and result, and which
files exist afterwards."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import trio

from actors.kernel import Runtime
from actors.mockllm import Script, serve_mock_llm
from actors.models import open_gateway
from actors.models.config import endpoint
from actors.session.actor import SessionActor
from actors.session.profiles import anthropic_profile
from environments.local import LocalEnvironment
from protocol.events import PolicyDecisionEvent, ToolCallEndEvent
from protocol.session import SessionConfig, Submit, Subscribe, WaitIdle

HANG_GUARD = 60
FILES = ("deps.lock", "notes.txt")


def script() -> Script:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "write_file", "arguments": {"file_path": name, "content": "x"}}]}
        for name in FILES
    ]
    return msgspec.convert({"turns": [*turns, {"text": "Done."}]}, Script)


async def main(work: Path, settings: dict[str, Any]) -> None:
    seen: dict[str, list[Any]] = {"decisions": [], "results": []}
    config = msgspec.convert(settings, SessionConfig)
    with trio.fail_after(HANG_GUARD):
        async with (
            Runtime() as runtime,
            serve_mock_llm(script()) as mock,
            open_gateway(runtime, endpoint("anthropic", mock.base_url, "k")) as model,
        ):
            env = await runtime.spawn(LocalEnvironment(work), name="environments/local")
            session = await runtime.spawn(
                SessionActor(anthropic_profile("scripted"), env, model, config),
                name="sessions/rule",
            )
            events = await session.ask(Subscribe(after_seq=0))
            await session.tell(Submit("Write the two files."))
            await session.ask(WaitIdle(), timeout=None)
            async for event in events:
                match event.data:
                    case PolicyDecisionEvent() as decided:
                        seen["decisions"].append([decided.subject, decided.action,
                                                  decided.rule, decided.reason])  # fmt: skip
                    case ToolCallEndEvent() as ended:
                        seen["results"].append([ended.output, ended.is_error])
                if event.kind == "processing_end":
                    break
    seen["files"] = sorted(path.name for path in await trio.Path(work).iterdir())
    print(json.dumps(seen))


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]), json.loads(sys.argv[2]))
