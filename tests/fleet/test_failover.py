"""Failover on a fleet of three ``troupe serve`` on one PostgreSQL (issue 37): a
node that owns sessions with a running input is killed with SIGKILL at a
random moment; another node takes them over as a restart would (the running
input interrupted), every follower (json and msgpack, each subscribed at some
node and moving to another when its node dies) ends with exactly the events
the store holds, none missing, none twice, and every session takes a new
input afterwards."""

from __future__ import annotations

import os
import random
from pathlib import Path

import msgspec
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import CreateSession, SubmitInput
from tests.fleet.conftest import (
    HANG_GUARD,
    TOKEN,
    TTL,
    Follower,
    Node,
    fleet,
    lease_of,
    stored_seqs,
)
from tests.postgres import PostgresCluster
from tests.waiting import wait_until

ROUNDS = int(os.environ.get("TROUPE_FLEET_ROUNDS", "1"))
"""Kill rounds: one in the default suite (three servers per round cost several
seconds on a 2-core machine); ``TROUPE_FLEET_ROUNDS=20`` runs the acceptance's
twenty, each on a fresh database with a random victim at a random moment."""


def slow_script(steps: int = 20, inputs: int = 3) -> Script:
    """Each input: several model turns (each a little slow to answer), then text;
    counted per session (a conversation), so sessions and rounds never share turns."""
    one: list[dict[str, object]] = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": f"echo step {n}"}}],
         "delay": 0.1}
        for n in range(steps)
    ]  # fmt: skip
    one.append({"text": "Done with this input.", "delay": 0.1})
    return msgspec.convert({"conversations": [{"match": "", "turns": one * inputs}]}, Script)


def _state(url: str, nodes: list[Node]) -> str:
    """What the fleet looks like, for a failure's message."""
    import psycopg

    with psycopg.connect(url) as connection:
        leases = connection.execute(
            "SELECT l.session_id, l.node_id, l.epoch, l.expires_at - clock_timestamp(), s.state"
            " FROM troupe.leases l JOIN troupe.sessions s ON s.id = l.session_id"
        ).fetchall()
    logs = "\n".join(f"--- {n.name}:\n{n.log_text()[-2000:]}" for n in nodes)
    return f"leases: {leases}\n{logs}"


def _check_exact(follower: Follower, url: str) -> None:
    """The follower got each stored event once, in order, and nothing else durable."""
    got = follower.durable()
    seqs = [seq for seq, _ in got]
    assert len(seqs) == len(set(seqs)), f"duplicated events: {follower.session}"
    assert seqs == sorted(seqs), f"out of order: {follower.session}"
    assert got == stored_seqs(url, follower.session), f"lost or missing: {follower.session}"


async def _create(node: Node, count: int) -> list[str]:
    async with connect(node.url, TOKEN) as client:
        return [(await client.request(CreateSession)).session.session_id for _ in range(count)]


async def _submit(node: Node, session: str, text: str) -> None:
    async with connect(node.url, TOKEN) as client:
        await client.request(SubmitInput, session=session, text=text)


def _inputs_ended(follower: Follower) -> int:
    return sum(1 for e in follower.received if e.kind == "processing_end")


async def failover_round(root: Path, url: str, base_url: str, seed: int) -> None:
    chance = random.Random(seed)
    async with fleet(root, url, base_url) as nodes, trio.open_nursery() as nursery:
        owned = {node.name: await _create(node, 2) for node in nodes}
        owner = {s: name for name, sessions in owned.items() for s in sessions}
        followers: list[Follower] = []
        for number, session in enumerate(owner):
            for encoding in ("json", "msgpack"):
                follower = Follower(session, nodes, encoding, start=number + len(followers))
                followers.append(follower)
                nursery.start_soon(follower.run)
        for session, name in owner.items():
            await _submit(next(n for n in nodes if n.name == name), session, "first input")
        victim = nodes[chance.randrange(len(nodes))]
        victims = owned[victim.name]
        watch = [f for f in followers if f.session in victims]
        await watch[0].wait_for(
            lambda f: any(e.kind == "tool_call_start" for e in f.received), "a running tool"
        )
        await trio.sleep(chance.uniform(0, 1.0))  # a random moment of the running inputs
        victim.kill()
        await victim.process.wait()

        # Taken over by a surviving node, its running input ended as interrupted.
        def taken_over() -> bool:
            return all((lease_of(url, s) or (victim.name,))[0] != victim.name for s in victims)

        with trio.move_on_after(TTL + 2) as guard:  # a hang guard, not a timing
            await wait_until(taken_over, what="the take-over", interval=0.05)
        assert not guard.cancelled_caught, _state(url, nodes)
        for follower in followers:
            await follower.wait_for(lambda f: _inputs_ended(f) >= 1, "the first input to end")
        for follower in watch:  # killed mid-input: the input ended as interrupted
            ended = next(e for e in follower.received if e.kind == "processing_end")
            assert ended.data["interrupted"] is True
            assert any(e.kind == "input_interrupted" for e in follower.received)

        # Every session takes a new input, through a surviving node.
        alive = [n for n in nodes if n.alive]
        for number, session in enumerate(owner):
            await _submit(alive[number % len(alive)], session, "second input")
        for follower in followers:
            await follower.wait_for(lambda f: _inputs_ended(f) >= 2, "the second input to end")
        for follower in followers:
            with trio.fail_after(HANG_GUARD):
                while follower.cursor < stored_seqs(url, follower.session)[-1][0]:
                    await follower.changed.wait()
            _check_exact(follower, url)
        nursery.cancel_scope.cancel()


async def test_a_killed_node_s_sessions_continue_elsewhere_with_no_gap(
    tmp_path: Path, postgres: PostgresCluster, postgres_url: str
) -> None:
    root = Path(await trio.Path(tmp_path).resolve())
    async with serve_mock_llm(slow_script()) as mock:
        for number in range(ROUNDS):
            url = postgres_url if number == 0 else postgres.create_database()
            try:
                await failover_round(root / f"round-{number}", url, mock.base_url, number)
            finally:
                if number:
                    postgres.drop_database(url)
