"""Permission requests reach the editor: ``troupe acp --connect`` in front of a
server in this process; the session's approval requests (the mechanism the safety
policy will drive) become ``session/request_permission`` for the official SDK
client, whose answers (reject, then allow) come back as the decisions."""

from __future__ import annotations

import json
import subprocess
import sys

import trio

from tests.acp.test_acp_sdk_client import CLIENT, HANG_GUARD, SDK, require_client
from tests.waiting import wait_until
from tests.wire.conftest import StartStack, shell_turns, start_stack

__all__ = ["start_stack"]


async def test_permission_asked_in_the_editor_reject_then_allow(start_stack: StartStack):
    require_client()
    # "go" in the session's directory: the sandbox gives commands a private /tmp, so
    # a flag under tmp_path never reached it (the command ran into its 10 s timeout).
    script = shell_turns("while [ ! -e go ]; do sleep 0.05; done; echo released")
    async with start_stack(script) as stack:
        troupe = [sys.executable, "-m", "actors.cli", "acp", "--connect", stack.url,
                  "--token", stack.token]  # fmt: skip
        answers = ["reject_once", "allow_once"]
        plan = {"sdk": str(SDK), "command": troupe, "cwd": str(stack.work),
                "prompts": ["wait for go"], "permissions": answers}  # fmt: skip
        registry = stack.server.registry
        decisions: list[tuple[bool, str | None]] = []
        async with trio.open_nursery() as nursery:
            done: list[subprocess.CompletedProcess[bytes]] = []

            async def run_client() -> None:
                with trio.fail_after(HANG_GUARD):
                    done.append(
                        await trio.run_process(
                            ["node", str(CLIENT), json.dumps(plan)], capture_stdout=True
                        )
                    )

            nursery.start_soon(run_client)
            await wait_until(lambda: bool(registry.infos()), what="the ACP session")
            session = registry.infos()[0].session_id
            await wait_until(
                lambda: registry.record(session).state == "processing", what="the prompt"
            )
            approvals = registry.record(session).approvals
            assert approvals is not None
            decisions.append(await approvals.request("command", "rm -rf build"))
            decisions.append(await approvals.request("command", "make deploy"))
            (stack.work / "go").touch()
        assert decisions == [(False, "rejected in the editor"), (True, None)]
        result = json.loads(done[0].stdout.decode().strip().splitlines()[-1])
        assert "error" not in result, result
        assert result["prompts"] == [{"stopReason": "end_turn"}]
        asked = result["permissionRequests"]
        assert [request["toolCall"]["title"] for request in asked] == [
            "command: rm -rf build",
            "command: make deploy",
        ]
        assert {option["kind"] for option in asked[0]["options"]} == {
            "allow_once", "allow_always", "reject_once",
        }  # fmt: skip
