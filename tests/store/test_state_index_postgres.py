"""PostgreSQL too reads the sessions that were running through the state's index
(issue 36: start-up flat in the number of stored sessions): ``NOT IN`` is no index
condition there either, so the query asks for the three ranges around the two
states at rest, as SQLite's does (tests/store/test_state_index.py)."""

from __future__ import annotations

import json

from actors.store.postgres import NOT_AT_REST, open_postgres


def test_the_running_sessions_are_read_through_the_state_index(postgres_url: str) -> None:
    backend = open_postgres(postgres_url)
    try:
        with backend.connection() as connection:
            connection.execute(
                "INSERT INTO sessions SELECT 's-' || n, 'openai', 'm', 'local', '/w', ''::bytea,"
                " CASE WHEN n % 3 = 0 THEN 'closed' ELSE 'idle' END, 0, n, n"
                " FROM generate_series(1, 10000) AS n"
            )
            connection.execute(
                "UPDATE sessions SET state = CASE id WHEN 's-7' THEN 'processing'"
                " WHEN 's-9' THEN 'awaiting_input' ELSE 'later' END"
                " WHERE id IN ('s-7', 's-9', 's-11')"
            )
            connection.execute("ANALYZE sessions")
            plan = connection.execute(("EXPLAIN (FORMAT JSON) " + NOT_AT_REST).encode())
            steps = json.dumps(plan.fetchone()[0])  # type: ignore[index]
        rows = backend.sessions_not_at_rest()
    finally:
        backend.close()
    # a state written by another version of Troupe counts as not at rest too
    assert [(row.id, row.state) for row in rows] == [
        ("s-7", "processing"), ("s-9", "awaiting_input"), ("s-11", "later"),
    ]  # fmt: skip
    assert "sessions_by_state" in steps and '"Seq Scan"' not in steps, steps
