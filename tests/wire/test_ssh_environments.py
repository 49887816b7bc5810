"""SSH environments over the wire (issue 20, items 2 and 3): a duplicate or invalid
name is refused with a typed error and the hosts already added keep answering;
hosts are stored (no secrets) and come back when the server starts again; a bridge
that fails is restarted with its hosts. Against the fixture's real OpenSSH sshd."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import trio

from actors.kernel import ActorError
from environments.kinds import AlreadyExists
from protocol.environment import AddSSHHost
from protocol.wire import (
    AddSSHEnvironment,
    CreateSession,
    ExecInEnvironment,
    ListEnvironments,
    RemoveEnvironment,
    SubmitInput,
)
from tests.environments import conftest as environment_fixtures
from tests.environments.sshd import SSHServer
from tests.wire.conftest import HANG_GUARD, StartStack, events_until, shell_turns, subscribe
from tests.wire.test_requests import expect_error


@pytest.fixture
def store() -> str:
    """SQLite whatever ``TROUPE_TEST_STORE`` says: this test reads ``troupe.db`` itself."""
    return ""


sshd = environment_fixtures.sshd
"""The session-wide test sshd of the environment tests (a real OpenSSH server)."""


def ssh_fields(server: SSHServer, name: str, workdir: Path) -> dict:
    return {
        "name": name,
        "target": f"ssh://root@127.0.0.1:{server.port}",
        "working_dir": str(workdir),
        "known_hosts": str(server.known_hosts),
        "client_keys": [str(server.client_key)],
    }


async def assert_answers(client, name: str) -> None:
    done = await client.request(ExecInEnvironment, environment=name, command="echo $((6*7))")
    assert done.result.stdout == "42\n"


async def ssh_addresses(client) -> list[str]:
    listed = await client.request(ListEnvironments)
    return sorted(e.address for e in listed.environments if e.kind == "ssh")


async def test_duplicate_name_is_already_exists_and_hosts_survive_a_restart(
    start_stack: StartStack,
    sshd: SSHServer,
    tmp_path: Path,
) -> None:
    with trio.fail_after(HANG_GUARD * 2):
        async with start_stack() as stack, stack.client() as client:
            await client.request(AddSSHEnvironment, **ssh_fields(sshd, "box", tmp_path))
            await client.request(AddSSHEnvironment, **ssh_fields(sshd, "other", tmp_path))
            await expect_error("already_exists", client, AddSSHEnvironment,
                               **ssh_fields(sshd, "box", tmp_path))  # fmt: skip
            await assert_answers(client, "box")
            await assert_answers(client, "/environments/ssh/other")
            await client.request(RemoveEnvironment, environment="other")
            assert await ssh_addresses(client) == ["/environments/ssh/box"]
        stored = (stack.data_dir / "troupe.db").read_bytes()
        assert str(sshd.client_key).encode() in stored  # the key's path, never its content
        assert sshd.client_key.read_bytes().strip().splitlines()[1] not in stored
        async with start_stack() as stack, stack.client() as client:
            assert await ssh_addresses(client) == ["/environments/ssh/box"]
            await assert_answers(client, "box")
            await expect_error("already_exists", client, AddSSHEnvironment,
                               **ssh_fields(sshd, "box", tmp_path))  # fmt: skip


@pytest.mark.parametrize("name", ["bad name", "", "-x", "\U0001f600", "a/b", ".", "n" * 65])
async def test_an_invalid_name_is_refused_and_hosts_survive(
    start_stack: StartStack,
    sshd: SSHServer,
    tmp_path: Path,
    name: str,
) -> None:
    with trio.fail_after(HANG_GUARD):
        async with start_stack() as stack, stack.client() as client:
            await client.request(AddSSHEnvironment, **ssh_fields(sshd, "box", tmp_path))
            await expect_error("invalid_request", client, AddSSHEnvironment,
                               **ssh_fields(sshd, name, tmp_path))  # fmt: skip
            assert await ssh_addresses(client) == ["/environments/ssh/box"]
            await assert_answers(client, "box")


async def test_a_failed_bridge_restarts_with_its_hosts_and_sessions_hear_of_it(
    start_stack: StartStack,
    sshd: SSHServer,
    tmp_path: Path,
) -> None:
    with trio.fail_after(HANG_GUARD * 2):
        async with start_stack(shell_turns("echo $((6*7))")) as stack, stack.client() as client:
            await client.request(AddSSHEnvironment, **ssh_fields(sshd, "box", tmp_path))
            created = await client.request(CreateSession, environment="/environments/ssh/box")
            session = created.session.session_id
            await subscribe(client, session, after_seq=created.session.last_seq)
            # A request that bypasses the gateway's checks reaches the bridge and
            # fails it (the kernel cannot register the address); a bridge that
            # refuses it instead is fine too: either way the hosts must survive.
            bridge = stack.server.runtime.ref("/environments/ssh")
            with contextlib.suppress(ActorError):
                await bridge.ask(AddSSHHost(target="ssh://x@127.0.0.1:1", name="bad name"))
            # Fail it for certain, through the kernel's own failure path.
            bridge._cell.record_failure(RuntimeError("the bridge broke"))
            again = AddSSHHost(**{**ssh_fields(sshd, "box", tmp_path), "client_keys": []})
            with pytest.raises(AlreadyExists):  # answered once the restart re-added box
                await bridge.ask(again)
            assert stack.server.runtime.restarts
            assert await ssh_addresses(client) == ["/environments/ssh/box"]
            await assert_answers(client, "box")
            warning = await events_until(client, "service_restarted")
            assert warning[-1].data["address"] == "/environments/ssh"
            await client.request(SubmitInput, session=session, text="compute")
            events = await events_until(client, "processing_end")
            ends = [e for e in events if e.kind == "tool_call_end"]
            assert ends and "42" in ends[0].data["output"] and not ends[0].data["is_error"]


@pytest.mark.parametrize("target", ["ssh://[::1", "", "u@h:abc", "ssh://u@h:99999", "a\x00b"])
async def test_an_invalid_target_is_refused_and_hosts_survive(
    start_stack: StartStack, sshd: SSHServer, tmp_path: Path, target: str
) -> None:
    with trio.fail_after(HANG_GUARD):
        async with start_stack() as stack, stack.client() as client:
            await client.request(AddSSHEnvironment, **ssh_fields(sshd, "box", tmp_path))
            fields = {**ssh_fields(sshd, "other", tmp_path), "target": target}
            await expect_error("invalid_request", client, AddSSHEnvironment, **fields)
            assert await ssh_addresses(client) == ["/environments/ssh/box"]
            await assert_answers(client, "box")
            assert not stack.server.runtime.restarts  # refused before the bridge
