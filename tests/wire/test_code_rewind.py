"""Code rewind and a fork's own working tree over the protocol, on a local and on
an SSH environment (the fixture's real sshd): files changed by ``write_file``,
``apply_patch`` and shell commands (``sed -i``, ``rm``, ``mv``, a generated file)
come back byte for byte from the workspace snapshot taken at the input."""

from __future__ import annotations

import signal
from pathlib import Path

import msgspec
import pytest
import trio

from actors.mockllm import Script, serve_mock_llm
from protocol.client import RequestError, TroupeClient, connect
from protocol.session import SessionConfig, UserTurn
from protocol.wire import (
    AddSSHEnvironment,
    CreateSession,
    Event,
    Forked,
    ForkSession,
    GetSession,
    RewindSession,
    Rewound,
    SessionCreated,
    SessionDetail,
    SubmitInput,
)
from tests.environments import conftest as environment_fixtures
from tests.environments.sshd import SSHServer
from tests.environments.test_workspace_snapshots import tree_of
from tests.session.scripts import call, turns
from tests.wire.conftest import (
    BOTH_STORES,
    HANG_GUARD,
    StartStack,
    events_until,
    subscribe,
    troupe_serve,
)
from tests.wire.test_ssh_environments import ssh_fields

sshd = environment_fixtures.sshd

PATCH = "*** Begin Patch\n*** Update File: patched.txt\n@@\n-old line\n+new line\n*** End Patch"
SHELL = (
    "sed -i s/beta/BETA/ sed.txt && rm gone.txt && mv moved.txt here.txt && "
    "seq 1 9 > generated.txt && chmod +x run.sh"
)
SCRIPT = turns(
    [call("write_file", file_path="written.txt", content="new\n"),
     call("apply_patch", patch=PATCH)],
    [call("shell", command=SHELL)],
    "Done.",
    "Nothing to do.",
    [call("shell", command="echo forked > fork-made.txt")],  # the fork's input
    "Forked work done.",
)  # fmt: skip
CONFIG = SessionConfig(policy="permissive")


def seed(work: Path) -> None:
    (work / "patched.txt").write_text("first\nold line\nlast\n")
    (work / "sed.txt").write_text("alpha\nbeta\n")
    (work / "gone.txt").write_bytes(b"bye\x00\xff\n")
    (work / "moved.txt").write_text("moving\n")
    (work / "run.sh").write_text("echo run\n")
    (work / "sub").mkdir()
    (work / "sub" / "deep.txt").write_text("deep\n")


async def ask(client: TroupeClient, session: str, text: str) -> list[Event]:
    await client.request(SubmitInput, session=session, text=text)
    return await events_until(client, "processing_end")


async def start(client: TroupeClient, environment: str | None) -> str:
    created = await client.request(CreateSession, config=CONFIG, environment=environment)
    assert isinstance(created, SessionCreated)
    await subscribe(client, created.session.session_id)
    return created.session.session_id


@pytest.mark.parametrize("where", ["local", "ssh"])
async def test_code_rewind_restores_every_kind_of_change_byte_for_byte(
    start_stack: StartStack, sshd: SSHServer, tmp_path: Path, where: str
) -> None:
    with trio.fail_after(HANG_GUARD * 3):
        async with start_stack(SCRIPT) as stack, stack.client() as client:
            work = stack.work
            environment = None
            if where == "ssh":
                work = tmp_path / "remote"
                work.mkdir()
                await client.request(AddSSHEnvironment, **ssh_fields(sshd, "box", work))
                environment = "/environments/ssh/box"
            seed(work)
            before = tree_of(work)
            session = await start(client, environment)
            first = await ask(client, session, "change things")
            changed = tree_of(work)
            assert changed != before and "generated.txt" in changed
            await ask(client, session, "and now?")
            to = next(e.seq for e in first if e.kind == "user_input")

            reply = await client.request(RewindSession, session=session, to_seq=to, mode="code")
            assert isinstance(reply, Rewound)
            assert tree_of(work) == before
            outcome = reply.outcome
            assert outcome.mode == "code" and outcome.turns_after == outcome.turns_before
            assert sorted(outcome.deleted) == ["generated.txt", "here.txt", "written.txt"]
            assert sorted(outcome.recreated) == ["gone.txt", "moved.txt"]
            assert sorted(outcome.changed) == ["patched.txt", "run.sh", "sed.txt"]
            event = (await events_until(client, "rewind"))[-1]
            assert event.data["files_deleted"] == 3 and event.data["snapshot"] == outcome.snapshot

            # the conversation was not cut; both: the files are the same, the talk goes back
            detail = await client.request(GetSession, session=session)
            assert isinstance(detail, SessionDetail)
            assert len([t for t in detail.history if isinstance(t, UserTurn)]) == 2
            (work / "stray.txt").write_text("made after the rewind\n")
            both = await client.request(RewindSession, session=session, to_seq=to, mode="both")
            assert isinstance(both, Rewound) and both.outcome.mode == "both"
            assert both.outcome.deleted == ["stray.txt"] and both.outcome.turns_after == 0
            assert tree_of(work) == before


async def test_a_fork_with_its_own_tree_is_independent(
    start_stack: StartStack, tmp_path: Path
) -> None:
    with trio.fail_after(HANG_GUARD * 3):
        async with start_stack(SCRIPT) as stack, stack.client() as client:
            seed(stack.work)
            session = await start(client, None)
            first = await ask(client, session, "change things")
            after_first = tree_of(stack.work)
            at = [e.seq for e in first if e.kind == "assistant_text_end"][-1]  # "Done."
            second = await ask(client, session, "and now?")
            (stack.work / "later.txt").write_text("the original goes on\n")

            copy = tmp_path / "fork-tree"
            forked = await client.request(
                ForkSession, session=session, at_seq=at, working_dir=str(copy)
            )
            assert isinstance(forked, Forked) and forked.working_dir == str(copy)
            assert tree_of(copy) == after_first  # the tree as it was at that answer

            at_input = next(e.seq for e in second if e.kind == "user_input")
            before_input = tmp_path / "fork-at-input"
            forked_input = await client.request(
                ForkSession, session=session, at_seq=at_input, working_dir=str(before_input)
            )
            assert isinstance(forked_input, Forked) and forked_input.turns == 6
            assert tree_of(before_input) == after_first

            fork = forked.session.session_id
            await subscribe(client, fork)
            original = tree_of(stack.work)
            await ask(client, fork, "work in the fork")  # a shell command, in the copy
            assert (copy / "fork-made.txt").read_text() == "forked\n"
            assert tree_of(stack.work) == original  # the original's tree is untouched
            assert (stack.work / "later.txt").exists() and not (copy / "later.txt").exists()


@BOTH_STORES
async def test_a_code_rewind_after_sigkill_and_restart(tmp_path: Path, store: str) -> None:
    """The snapshots are durable events: a server killed with SIGKILL and started
    again rewinds the files to an input of before the kill."""
    root = Path(await trio.Path(tmp_path).resolve())
    work, data = root / "work", root / "data"
    work.mkdir()
    seed(work)
    before = tree_of(work)
    async with serve_mock_llm(msgspec.convert(SCRIPT, Script)) as mock:
        async with troupe_serve(data, work, mock.base_url, store) as serve:
            token = (data / "token").read_text().strip()
            async with connect(serve.url, token) as client:
                session = await start(client, None)
                first = await ask(client, session, "change things")
            serve.process.send_signal(signal.SIGKILL)
            with trio.fail_after(HANG_GUARD):
                await serve.process.wait()
        assert tree_of(work) != before
        to = next(e.seq for e in first if e.kind == "user_input")
        async with (
            troupe_serve(data, work, mock.base_url, store) as serve,
            connect(serve.url, token) as client,
        ):
            reply = await client.request(RewindSession, session=session, to_seq=to, mode="both")
            assert isinstance(reply, Rewound) and reply.outcome.turns_after == 0
            assert tree_of(work) == before
            with pytest.raises(RequestError) as refused:  # a relative directory is refused
                await client.request(ForkSession, session=session, working_dir="elsewhere")
            assert refused.value.code == "invalid_request"
