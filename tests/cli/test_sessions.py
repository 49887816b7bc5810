"""Going on with a session: ``--resume``, ``--continue``, and the listing that finds
them. Each run is its own process; the history comes back from the store."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from typing import Any

from tests.cli.conftest import Home, mock_llm, one_line, request_bodies, text_of
from tests.cli.test_errors import serve, stop


def result_of(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.decode().splitlines()[-1])


async def test_resume_sends_the_whole_history(home: Home) -> None:
    script = {"turns": [{"text": "First answer: 42."}, {"text": "Second answer."}]}
    async with mock_llm(script) as mock:
        common = ["--base-url", mock.base_url, "--output-format", "json"]
        first = result_of(await home.troupe("run", *common, "first question"))
        second = result_of(
            await home.troupe("run", *common, "--resume", first["session_id"], "and then?")
        )
        bodies = request_bodies(mock)
    assert second["session_id"] == first["session_id"]
    assert second["result"] == "Second answer."
    history = text_of(bodies[1])
    assert history.index("first question") < history.index("First answer: 42.")
    assert history.index("First answer: 42.") < history.index("and then?")


async def test_continue_picks_the_latest_session_of_this_directory(home: Home) -> None:
    other = home.root / "other"
    other.mkdir()
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        common = ["--base-url", mock.base_url, "--output-format", "json"]
        older = result_of(await home.troupe("run", *common, "old task here"))
        here = result_of(await home.troupe("run", *common, "latest task here"))
        result_of(await home.troupe("run", *common, "task elsewhere", cwd=other))
        again = result_of(await home.troupe("run", *common, "--continue", "go on"))
        bodies = request_bodies(mock)
    assert again["session_id"] == here["session_id"] != older["session_id"]
    last = text_of(bodies[-1])
    assert "latest task here" in last and "go on" in last
    assert "task elsewhere" not in last and "old task here" not in last


async def test_continue_with_nothing_to_continue(home: Home) -> None:
    done = await home.troupe("run", "--base-url", "http://127.0.0.1:9", "-c", "go on")
    assert done.returncode == 2 and "no session has run in" in one_line(done.stderr)
    missing = await home.troupe("run", "--base-url", "http://127.0.0.1:9", "--resume", "s-0", "x")
    assert missing.returncode == 2 and "no session s-0" in one_line(missing.stderr)


async def test_sessions_list_task_directory_state_and_update_time(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        first = result_of(await home.troupe("run", "--base-url", mock.base_url,
                                            "--output-format", "json", "list me"))  # fmt: skip
        listed = await home.troupe("sessions", "--json")
        table = await home.troupe("sessions")
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["session_id"] == first["session_id"]
    assert (row["task"], row["working_dir"], row["state"]) == ("list me", str(home.work), "idle")
    assert row["created"] <= row["updated"]
    text = table.stdout.decode()
    assert "TASK" in text and "list me" in text and str(home.work)[-20:] in text


async def test_a_session_without_a_summary_lists_its_first_input(home: Home) -> None:
    """The listing takes the task from the session's summary; a store from before
    summaries (or a summary not written yet) has none, and the first input is read
    from the events instead."""
    async with mock_llm({"turns": [{"text": "ok"}, {"text": "ok"}]}) as mock:
        common = ["--base-url", mock.base_url, "--output-format", "json"]
        kept = result_of(await home.troupe("run", *common, "summarised task"))
        lost = result_of(await home.troupe("run", *common, "task without a summary"))
    with sqlite3.connect(home.data / "troupe.db") as connection:
        connection.execute("DELETE FROM summaries WHERE session_id = ?", (lost["session_id"],))
    connection.close()
    listed = await home.troupe("sessions", "--json")
    tasks = {row["session_id"]: row["task"] for row in map(json.loads, listed.stdout.splitlines())}
    assert tasks == {
        kept["session_id"]: "summarised task",
        lost["session_id"]: "task without a summary",
    }


async def test_a_store_from_before_last_events_lists_the_same_and_is_carried_over(
    home: Home,
) -> None:
    """The listing reads each session's last event from ``last_events``, which the
    store keeps with every batch. A store at schema version 2 (no such table) is
    listed read-only as it is, from the events; the next Troupe that opens it for
    writing fills the table from them, and the listing says the same again."""
    async with mock_llm({"turns": [{"text": "ok"}, {"text": "ok"}, {"text": "again"}]}) as mock:
        common = ["--base-url", mock.base_url, "--output-format", "json"]
        first = result_of(await home.troupe("run", *common, "one task"))
        result_of(await home.troupe("run", *common, "another task"))
        current = await home.troupe("sessions", "--json")
        database = home.data / "troupe.db"
        with sqlite3.connect(database) as connection:
            connection.execute("DROP TABLE last_events")  # the store as version 2 had it
            connection.execute("DROP INDEX sessions_listed")
            connection.execute("UPDATE schema_version SET version = 2")
        connection.close()
        before = await home.troupe("sessions", "--json")
        resumed = await home.troupe("run", *common, "--resume", first["session_id"], "go on")
        after = await home.troupe("sessions", "--json")
    assert current.returncode == before.returncode == 0, before.stderr
    listed = [json.loads(line) for line in current.stdout.decode().splitlines()]
    assert [json.loads(line) for line in before.stdout.decode().splitlines()] == listed
    assert [row["last_seq"] > 0 for row in listed] == [True, True]
    result_of(resumed)  # the store opened for writing: version 3, the table filled
    with sqlite3.connect(database) as connection:
        kept = dict(connection.execute("SELECT session_id, seq FROM last_events"))
        newest = dict(connection.execute("SELECT session_id, MAX(seq) FROM events GROUP BY 1"))
    connection.close()
    assert kept == newest
    rows = {row["session_id"]: row for row in map(json.loads, after.stdout.splitlines())}
    assert rows[first["session_id"]]["last_seq"] == newest[first["session_id"]]
    assert rows[first["session_id"]]["updated"] > max(row["updated"] for row in listed)


async def test_run_uses_the_running_server_and_says_so(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "served"}]}) as mock:
        server, url = await serve(home, "--base-url", mock.base_url)
        try:
            done = await home.troupe("run", "on the server")
            assert done.returncode == 0, done.stderr
            assert f"(server {url})".encode() in done.stdout
            listed = await home.troupe("sessions", "--json")
            (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
            assert row["status"] == "live" and row["task"] == "on the server"
            headless = await home.troupe("run", "--output-format", "json", "quiet")
            assert json.loads(headless.stdout.splitlines()[-1])["runtime"] == url
            embedded = await home.troupe("run", "--embedded", "--base-url", mock.base_url, "x")
            assert b"(embedded runtime)" in embedded.stdout
            flagged = await home.troupe("run", "--base-url", mock.base_url, "y")
            assert b"(embedded runtime)" in flagged.stdout
            assert "--base-url was given: running embedded" in one_line(flagged.stderr)
            claude = await home.troupe("run", "--provider", "anthropic", "as claude")
            assert claude.returncode == 0, claude.stderr
            assert mock.requests[-1].path.endswith("/messages")  # each profile its own wire
        finally:
            stop(server)


async def test_sessions_of_another_servers_store(home: Home) -> None:
    """``--connect`` to a server whose store is elsewhere lists that server's
    sessions, tasks included, and not this machine's."""
    elsewhere = home.root / "elsewhere"
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        local = await home.troupe("run", "--base-url", mock.base_url, "a local task")
        assert local.returncode == 0, local.stderr
        server, url = await serve(home, "--base-url", mock.base_url, "--data-dir", str(elsewhere))
        try:
            token = (elsewhere / "token").read_text().strip()
            remote = ["--connect", url, "--token", token]
            done = await home.troupe("run", *remote, "a remote task")
            assert done.returncode == 0, done.stderr
            listed = await home.troupe("sessions", *remote, "--json")
        finally:
            stop(server)
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(row["task"], row["status"]) for row in rows] == [("a remote task", "live")]
