"""A stateful property-based test: random sequences of valid, mutated and hostile
requests over real connections (JSON and msgpack) to a real server, checking after
every step that

- every request got exactly one reply, and never an ``internal`` error;
- the server logged no traceback and no error;
- every connection is still open, and another connection is still answered;
- on every subscription, seqs strictly increase with no duplicate, and nothing
  arrives after an ``unsubscribe`` was answered;
- a client that resumes after the highest durable seq it saw misses nothing the
  store holds.

CI runs a fixed small budget; ``TROUPE_FUZZ_EXAMPLES`` and ``TROUPE_FUZZ_STEPS``
run it longer (``TROUPE_FUZZ_EXAMPLES=200 TROUPE_FUZZ_STEPS=100 pytest tests/fuzz``).
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from protocol.events import EPHEMERAL_KINDS
from tests.fuzz.client import FuzzConnection, Violation
from tests.fuzz.server_thread import ServerThread, TracebackRecorder
from tests.fuzz.strategies import (
    HOSTILE_FRAMES,
    PROFILES,
    encodable,
    mutate,
    pick,
    valid_request,
)
from tests.wire.conftest import StartStack, shell_turns

EXAMPLES = int(os.environ.get("TROUPE_FUZZ_EXAMPLES", "8"))
STEPS = int(os.environ.get("TROUPE_FUZZ_STEPS", "35"))
LIVE_HEALTH_CHECKS = [
    check for check in HealthCheck.__members__.values() if check in tuple(HealthCheck)
]
"""Every health check is off (the server lives across examples). Iterating
``HealthCheck`` leaves out the deprecated ones, which warn when suppressed, but is
typed loosely; the members' mapping is typed, so it is filtered by that iteration."""
KINDS = [
    "create_session", "submit", "steer", "follow_up", "get_session", "subscribe",
    "unsubscribe", "interrupt", "abort", "update_config", "resolve_approval", "exec",
    "read_file", "write_file", "add_ssh_environment", "add_environment", "remove_environment",
    "list_sessions", "list_environments",
]  # fmt: skip
_ids = itertools.count(1)


class ServerFuzzer(RuleBasedStateMachine):
    """Drives the one server of the test; connections persist across examples."""

    server: ServerThread
    connections: list[FuzzConnection]
    pinger: FuzzConnection
    resumer: FuzzConnection
    log: TracebackRecorder

    sessions: list[str]
    """Every session created so far (the server keeps them across examples)."""
    environments: list[str]

    # -- helpers -------------------------------------------------------------

    def _request(self, connection: FuzzConnection, frame: dict[str, Any]) -> dict[str, Any]:
        return self.server.run(connection.request, frame)

    def _carrier(self, which: int, frame: dict[str, Any]) -> FuzzConnection | None:
        """Connection ``which``, or a JSON one for a frame msgpack cannot carry (an int
        beyond 64 bits); None if no encoding can."""
        connection = self.connections[which]
        if encodable(frame, connection.encoding) is None:
            connection = self.connections[0]  # JSON carries what msgpack cannot
            if encodable(frame, connection.encoding) is None:
                return None
        return connection

    def _note(self, connection: FuzzConnection, frame: dict[str, Any], reply: dict) -> None:
        if reply["type"] == "session_created":
            self.sessions.append(reply["session"]["session_id"])
        elif reply["type"] == "environment_added":
            self.environments.append(reply["environment"]["address"])
        elif reply["type"] == "ok" and frame.get("type") == "unsubscribe":
            connection.note_unsubscribed(frame["session"])

    # -- rules ---------------------------------------------------------------

    @rule(data=st.data(), kind=st.sampled_from(KINDS), which=st.integers(0, 3))
    def send_valid(self, data: st.DataObject, kind: str, which: int) -> None:
        work = str(self.server.stack.work)  # type: ignore[union-attr]
        fields = valid_request(data.draw, kind, self.sessions, self.environments, work)
        frame = {"type": kind, "id": next(_ids), **fields}
        connection = self._carrier(which, frame)
        assert connection is not None, f"a valid frame no encoding carries: {frame}"
        self._note(connection, frame, self._request(connection, frame))

    @rule(data=st.data(), kind=st.sampled_from(KINDS), which=st.integers(0, 3))
    def send_mutated(self, data: st.DataObject, kind: str, which: int) -> None:
        work = str(self.server.stack.work)  # type: ignore[union-attr]
        fields = valid_request(data.draw, kind, self.sessions, self.environments, work)
        frame = mutate(data.draw, {"type": kind, "id": f"m-{next(_ids)}", **fields})
        connection = self._carrier(which, frame)
        if connection is not None:
            self._note(connection, frame, self._request(connection, frame))

    @rule(data=st.data(), which=st.integers(0, 3))
    def send_hostile(self, data: st.DataObject, which: int) -> None:
        connection = self.connections[which]
        frames = HOSTILE_FRAMES[connection.encoding]
        raw = frames[data.draw(st.sampled_from(sorted(frames)))]
        before = len(connection.anonymous_errors)

        async def send() -> dict[str, Any]:
            await connection.send_raw(raw)
            return await connection.anonymous_error(before)

        error = self.server.run(send)
        assert error["type"] == "error" and error["message"], error

    @rule(profile=st.sampled_from(PROFILES), which=st.integers(0, 3), text=st.text(max_size=20))
    def start_work(self, profile: str, which: int, text: str) -> None:
        """A session that does something: created, watched, given an input."""
        connection = self.connections[which]
        create = {"type": "create_session", "id": next(_ids), "profile": profile}
        created = self._request(connection, create)
        assert created["type"] == "session_created", created
        session = created["session"]["session_id"]
        self.sessions.append(session)
        self._request(connection, {"type": "subscribe", "id": next(_ids), "session": session})
        submit = {"type": "submit", "id": next(_ids), "session": session, "text": text}
        assert self._request(connection, submit)["type"] == "ok"

    @rule(data=st.data(), which=st.integers(0, 3))
    def subscribe_twice_without_waiting(self, data: st.DataObject, which: int) -> None:
        chosen = pick(data.draw, self.sessions or [""])
        if not self.sessions:
            return
        connection = self.connections[which]
        session = chosen
        frames = [
            {"type": "subscribe", "id": next(_ids), "session": name, "after_seq": 0}
            for name in (session, f"/sessions/{session}")
        ]

        async def both() -> None:
            for frame in frames:
                connection.sent_ids.add(frame["id"])
                await connection.send_raw(connection.encode(frame))
            for frame in frames:
                await connection.reply(frame["id"])

        self.server.run(both)

    @rule(data=st.data())
    def resume_after_the_highest_durable_seq(self, data: st.DataObject) -> None:
        session = pick(data.draw, self.sessions or [""])
        if not self.sessions:
            return
        seen = max((c.highest_durable.get(session, 0) for c in self.connections), default=0)
        self.server.run(self._resume, session, seen)

    async def _resume(self, session: str, after: int) -> None:
        store = self.server.stack.server.store  # type: ignore[union-attr]
        resumer = self.resumer
        subscribe = {"type": "subscribe", "id": next(_ids), "session": session, "after_seq": after}
        resumer.events.clear()
        await resumer.request(subscribe)
        await store.flush()
        stored = [row.seq for row in await store.events_after(session, after, 100_000)]
        if stored:
            got: set[int] = set()
            while not got.issuperset(stored):
                got = {
                    e["seq"]
                    for e in resumer.events
                    if e["session_id"] == session and e["kind"] not in EPHEMERAL_KINDS
                }
                early = [s for s in got if s <= after]
                if early:
                    raise Violation(f"resume after {after} replayed {early}")
                if not got.issuperset(stored):
                    await resumer.next_frame()
        unsubscribe = {"type": "unsubscribe", "id": next(_ids), "session": session}
        await resumer.request(unsubscribe)
        resumer.note_unsubscribed(session)

    # -- invariants ----------------------------------------------------------

    @invariant()
    def every_promise_holds(self) -> None:
        for connection in [*self.connections, self.pinger, self.resumer]:
            assert not connection.violations, connection.violations
            assert connection.closed is None, f"{connection.label} closed: {connection.closed}"
        assert not self.log.records, self.log.records
        ping = self._request(self.pinger, {"type": "list_sessions", "id": next(_ids)})
        assert ping["type"] == "session_list", ping


def test_random_requests_never_break_the_server(start_stack: StartStack, tmp_path: Path) -> None:
    recorder = TracebackRecorder()
    logger = logging.getLogger("troupe")
    logger.addHandler(recorder)
    try:
        with ServerThread(start_stack, shell_turns("echo fuzz")) as server:
            (server.stack.work / "f.txt").write_text("a file\n")  # type: ignore[union-attr]
            ServerFuzzer.server = server
            ServerFuzzer.log = recorder
            ServerFuzzer.connections = [
                server.connect(f"c{index}", encoding)
                for index, encoding in enumerate(["json", "msgpack", "json", "msgpack"])
            ]
            ServerFuzzer.pinger = server.connect("pinger", "msgpack")
            ServerFuzzer.resumer = server.connect("resumer", "json", keep_events=True)
            ServerFuzzer.sessions, ServerFuzzer.environments = [], []
            budget = settings(
                max_examples=EXAMPLES,
                stateful_step_count=STEPS,
                deadline=None,
                database=None,
                suppress_health_check=LIVE_HEALTH_CHECKS,
                # The server lives across examples, so a replay cannot reproduce a
                # run exactly: report the failing steps as found, unshrunk.
                phases=[Phase.explicit, Phase.generate],
                report_multiple_bugs=False,
            )
            run_state_machine_as_test(ServerFuzzer, settings=budget)
            print(summary([*ServerFuzzer.connections, ServerFuzzer.resumer]))
    finally:
        logger.removeHandler(recorder)


def summary(connections: list[FuzzConnection]) -> str:
    """What the run sent and got back (shown with ``pytest -s``)."""
    counts: Counter[str] = Counter()
    for connection in connections:
        for replies in connection.replies.values():
            for reply in replies:
                counts[reply.get("code", reply["type"])] += 1
        counts["error (no id)"] += len(connection.anonymous_errors)
        counts["events"] += connection.event_count
    return "fuzz: " + ", ".join(f"{name} {count}" for name, count in counts.most_common())
