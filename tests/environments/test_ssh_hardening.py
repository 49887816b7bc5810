"""SSH environments refusing bad input: crafted paths and names, key problems, jump
hosts with explicit trust settings, names that are taken or invalid."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from environments.errors import EnvironmentExists, FileNotFound, InvalidRequest, KeyLoadFailed
from environments.ssh.bridge import SSHBridge
from protocol.environment import AddSSHHost, ExecCommand, Initialize
from tests.environments.conftest import host_request, owned_directory
from tests.environments.sshd import SSHServer, make_passphrase_key
from tests.waiting import workers_per_cpu

HANG_GUARD = 30 * workers_per_cpu()  # stretched where workers share a CPU


def _with(request: AddSSHHost, **changes: object) -> AddSSHHost:
    fields = {f: getattr(request, f) for f in request.__struct_fields__}
    return AddSSHHost(**{**fields, **changes})  # type: ignore[arg-type]


async def test_crafted_working_dir_runs_nothing_on_the_host(
    sshd: SSHServer, runtime: Runtime
) -> None:
    base = owned_directory("root")
    marker = base / "pwned"
    crafted = f"{base}/a$(touch {marker})'; touch {marker}; echo '\"`touch {marker}`\""
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(sshd, "root", "crafted", Path(crafted)))
    with trio.fail_after(HANG_GUARD):
        await env.ask(Initialize())
        assert await trio.Path(crafted).is_dir(), "the directory is created under its literal name"
        with pytest.raises(FileNotFound):  # looked up under its literal name
            await env.ask(ExecCommand("pwd", working_dir=f"x$(touch {marker});y"))
    assert not marker.exists(), "a crafted working_dir ran a command on the host"


async def test_crafted_variable_names_are_refused(sshd: SSHServer, runtime: Runtime) -> None:
    base = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(host_request(sshd, "root", "names", base))
    marker = base / "pwned"
    with pytest.raises(InvalidRequest, match="variable name"):
        await env.ask(ExecCommand("true", env_vars={f"X=1; touch {marker}; Y": "v"}))
    assert not marker.exists()
    assert (await env.ask(ExecCommand("echo $GOOD_1", env_vars={"GOOD_1": "$(x)"}))).stdout == (
        "$(x)\n"
    )


async def test_key_problems_are_typed_and_name_the_file(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    protected = make_passphrase_key(tmp_path, "correct horse", sshd)
    base = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    request = host_request(sshd, "root", "locked", base)
    locked = await bridge.ask(_with(request, client_keys=[str(protected)]))
    with pytest.raises(KeyLoadFailed, match=str(protected)):
        await locked.ask(ExecCommand("true"))
    assert locked.alive, "a key problem is an error for the call, not a crash"
    wrong = await bridge.ask(
        _with(request, name="wrong", client_keys=[str(protected)], passphrase="nope")
    )
    with pytest.raises(KeyLoadFailed, match=str(protected)):
        await wrong.ask(ExecCommand("true"))
    missing = tmp_path / "no_such_key"
    absent = await bridge.ask(_with(request, name="absent", client_keys=[str(missing)]))
    with pytest.raises(KeyLoadFailed, match=str(missing)):
        await absent.ask(ExecCommand("true"))
    unlocked = await bridge.ask(
        _with(request, name="unlocked", client_keys=[str(protected)], passphrase="correct horse")
    )
    with trio.fail_after(HANG_GUARD):
        assert (await unlocked.ask(ExecCommand("echo in"))).stdout == "in\n"


async def test_jump_host_uses_the_explicit_known_hosts_and_keys(
    sshd: SSHServer, runtime: Runtime, tmp_path: Path
) -> None:
    # The config names no identity and no known_hosts file: the hop can only log in
    # and trust the host with the settings passed explicitly.
    config = tmp_path / "ssh_config"
    config.write_text(
        f"""Host behind-jump
    HostName 127.0.0.1
    Port {sshd.port}
    User root
    ProxyJump root@127.0.0.1:{sshd.port}
"""
    )
    base = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    env = await bridge.ask(
        AddSSHHost(
            target="behind-jump",
            name="behind-jump",
            working_dir=str(base),
            known_hosts=str(sshd.known_hosts),
            client_keys=[str(sshd.client_key)],
            config_files=[str(config)],
        )
    )
    with trio.fail_after(HANG_GUARD):
        result = await env.ask(ExecCommand('echo "$SSH_CONNECTION"'))
    assert result.exit_code == 0
    # Through the hop, the target sees the connection come from the jump host's sshd.
    assert result.stdout.split()[0] == "127.0.0.1"
    accepted = sshd.log_lines("Accepted publickey")
    assert len(accepted) >= 2, "both the hop and the target logged in"


async def test_taken_and_invalid_names_are_refused_and_the_others_stay(
    sshd: SSHServer, runtime: Runtime
) -> None:
    base = owned_directory("root")
    bridge = await runtime.spawn(SSHBridge())
    first = await bridge.ask(host_request(sshd, "root", "build", base))
    with pytest.raises(EnvironmentExists):
        await bridge.ask(host_request(sshd, "root", "build", base))
    for bad in ("bad name", "", "-x", "a/b", "\N{ROCKET}", ".."):
        with pytest.raises(InvalidRequest):
            await bridge.ask(host_request(sshd, "root", bad, base))
    with pytest.raises(InvalidRequest, match="max_connections"):
        await bridge.ask(_with(host_request(sshd, "root", "zero", base), max_connections=0))
    assert bridge.alive and first.alive
    assert (await first.ask(ExecCommand("echo kept"))).stdout == "kept\n"


@pytest.mark.parametrize("forwarding", [True, False])
async def test_agent_forwarding_is_a_per_host_option(
    sshd: SSHServer,
    runtime: Runtime,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forwarding: bool,
) -> None:
    socket_path = tmp_path / "agent.sock"
    agent = await trio.run_process(
        ["ssh-agent", "-a", str(socket_path)], capture_stdout=True, check=True
    )
    agent_pid = int(agent.stdout.decode().split("SSH_AGENT_PID=")[1].split(";")[0])
    try:
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket_path))
        await trio.run_process(["ssh-add", "-q", str(sshd.client_key)], capture_stderr=True)
        base = owned_directory("root")
        bridge = await runtime.spawn(SSHBridge())
        request = _with(host_request(sshd, "root", "agent", base), agent_forwarding=True)
        env = await bridge.ask(request if forwarding else _with(request, agent_forwarding=False))
        # What a private `git clone` over SSH does: log in to another host with the
        # forwarded agent (no key on the remote side).
        hop = (
            f"ssh -o BatchMode=yes -o UserKnownHostsFile={sshd.known_hosts} "
            f"-o IdentityFile=/nonexistent -p {sshd.port} root@127.0.0.1 echo via-agent"
        )
        with trio.fail_after(HANG_GUARD):
            listed = await env.ask(ExecCommand("ssh-add -l"))
            hopped = await env.ask(ExecCommand(hop))
        if forwarding:
            assert listed.exit_code == 0 and "ED25519" in listed.stdout
            assert hopped.stdout == "via-agent\n"
        else:
            assert listed.exit_code != 0
            assert hopped.exit_code != 0
    finally:
        os.kill(agent_pid, signal.SIGTERM)
