"""``troupe run --ssh-host NAME`` with the host from a config file: the session works
on a real OpenSSH sshd (the environments suite's fixture), and a resumed session
gets its host back in a new embedded runtime."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.cli.conftest import Home, mock_llm, one_line, request_bodies, shell_then_text
from tests.environments.conftest import sshd  # noqa: F401 - the fixture, shared
from tests.environments.sshd import SSHServer


async def test_run_on_a_configured_ssh_host(home: Home, sshd: SSHServer) -> None:  # noqa: F811
    remote = Path(tempfile.mkdtemp(prefix="troupe-cli-ssh-"))
    home.config.write_text(
        f'[ssh_hosts.box]\ntarget = "ssh://root@127.0.0.1:{sshd.port}"\n'
        f'working_dir = "{remote}"\nknown_hosts = "{sshd.known_hosts}"\n'
        f'client_keys = ["{sshd.client_key}"]\n'
    )
    script = shell_then_text("echo remote > made-here.txt; pwd", final="Made it.")
    script["turns"].append({"text": "Resumed there."})
    async with mock_llm(script) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "--ssh-host", "box", "go")
        assert done.returncode == 0, done.stderr
        assert f"in {remote} on ssh host box".encode() in done.stdout
        assert (remote / "made-here.txt").read_text() == "remote\n"
        assert str(remote).encode() in done.stdout  # pwd, as the remote shell saw it

        listed = await home.troupe("sessions", "--json")
        session = json.loads(listed.stdout.splitlines()[0])["session_id"]
        again = await home.troupe("run", "--base-url", mock.base_url, "--resume", session, "more")
        assert again.returncode == 0, again.stderr
        assert b"ssh host box" in again.stdout and b"Resumed there." in again.stdout
        assert "made-here.txt" in json.dumps(request_bodies(mock)[-1])


async def test_an_unknown_ssh_host_is_one_line(home: Home) -> None:
    done = await home.troupe("run", "--base-url", "http://127.0.0.1:9", "--ssh-host", "nope", "x")
    assert done.returncode == 2
    assert "no SSH host 'nope'" in one_line(done.stderr)
