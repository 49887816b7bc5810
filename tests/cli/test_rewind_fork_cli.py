"""``troupe rewind`` and ``troupe fork`` as a user runs them, against a running
``troupe serve`` and the scripted provider: what the model is sent afterwards is
read from the request bodies the mock received."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.cli.conftest import Home, mock_llm, one_line, request_bodies, text_of
from tests.cli.test_errors import serve, stop


def result_of(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.decode().splitlines()[-1])


def seqs_listed(done: subprocess.CompletedProcess[bytes]) -> dict[str, int]:
    """The input list ``troupe rewind SESSION`` prints: text -> seq."""
    assert done.returncode == 0, done.stderr
    rows = [line.split(None, 1) for line in done.stdout.decode().splitlines()[1:]]
    return {text: int(seq) for seq, text in rows}


async def test_rewind_lists_inputs_then_cuts_the_conversation_and_fork_goes_on(
    home: Home,
) -> None:
    async with mock_llm({"turns": [{"text": "An answer."}]}) as mock:
        server, _ = await serve(home, "--base-url", mock.base_url)
        try:
            json_out = ["--output-format", "json"]
            session = result_of(await home.troupe("run", *json_out, "first question"))["session_id"]
            result_of(await home.troupe("run", *json_out, "--resume", session, "second question"))

            listed = seqs_listed(await home.troupe("rewind", session))
            assert list(listed) == ["first question", "second question"]

            done = await home.troupe("rewind", session, "--to", str(listed["second question"]))
            assert done.returncode == 0, done.stderr
            out = done.stdout.decode()
            assert "rewound" in out and "'second question'" in out and "4 -> 2 turns" in out
            assert list(seqs_listed(await home.troupe("rewind", session))) == ["first question"]

            result_of(await home.troupe("run", *json_out, "--resume", session, "instead"))
            body = text_of(request_bodies(mock)[-1])
            assert "first question" in body and "instead" in body
            assert "second question" not in body

            forked = await home.troupe("fork", session)
            assert forked.returncode == 0, forked.stderr
            fork = forked.stdout.decode().splitlines()[0]
            assert fork.startswith("s-") and fork != session
            listed = await home.troupe("sessions", "--json")
            rows = [json.loads(line) for line in listed.stdout.decode().splitlines()]
            assert {r["session_id"]: r["forked_from"] for r in rows}[fork] == session
            result_of(await home.troupe("run", *json_out, "--resume", fork, "in the fork"))
            body = text_of(request_bodies(mock)[-1])
            assert "first question" in body and "instead" in body and "in the fork" in body

            bad = await home.troupe("rewind", session, "--to", "99999")
            assert bad.returncode == 2
            assert "not a user input" in one_line(bad.stderr)
            word = await home.troupe("fork", session, "--at", "$seq")
            assert word.returncode == 2
            assert "--at takes an event's seq" in one_line(word.stderr)
        finally:
            stop(server)
