"""The environments page: add an SSH host (the test's own real sshd) or a Docker
container (the test's own dockerd), and remove it."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.environments.conftest import DockerForTests
from tests.environments.conftest import docker as docker  # the fixture: a private dockerd
from tests.environments.conftest import sshd as sshd  # the fixture: a real OpenSSH sshd
from tests.environments.dockerd import labelled_containers
from tests.environments.sshd import SSHServer
from tests.web.conftest import TrioThread


@pytest.fixture
def stack(start_web: Callable[..., TrioThread]) -> Iterator[TrioThread]:
    with start_web({"turns": [{"text": "ok"}]}) as stack:
        yield stack


def test_add_and_remove_an_ssh_host(stack: TrioThread, page: Page, sshd: SSHServer) -> None:
    page.goto(stack.login_url)
    page.get_by_role("link", name="Environments").click()
    rows = page.locator("tr[data-environment]")
    expect(rows.filter(has_text="/environments/local")).to_have_count(1)
    page.get_by_label("Name", exact=True).fill("box")
    page.get_by_label("Target").fill(f"ssh://root@127.0.0.1:{sshd.port}")
    page.get_by_label("Known hosts file").fill(str(sshd.known_hosts))
    page.get_by_label("Client key file").fill(str(sshd.client_key))
    page.get_by_role("button", name="Connect").click()
    host = rows.filter(has_text="/environments/ssh/box")
    expect(host).to_have_count(1)
    expect(host).to_contain_text("ssh")
    # The page probes each host: it answered, from its working directory.
    expect(host.locator(".env-state .state")).to_have_text("reachable")
    expect(host.locator("td.env").nth(1)).to_contain_text("/")
    expect(host.locator("td.env .sub")).to_contain_text("linux")
    expect(rows.filter(has_text="/environments/local").locator(".state")).to_have_text("reachable")

    page.get_by_role("link", name="Sessions").click()
    page.get_by_role("button", name="New session").click()
    expect(page.get_by_label("Environment").locator("option")).to_contain_text(
        ["/environments/local (local)", "/environments/ssh/box (ssh)"]
    )

    page.get_by_role("link", name="Environments").click()
    host.get_by_role("button", name="Remove").click()
    expect(host).to_have_count(0)
    expect(rows.filter(has_text="/environments/local")).to_have_count(1)


def descendants(pid: int) -> list[int]:
    """``pid``'s children, grandchildren... (sshd forks one per connection)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def test_a_host_that_went_away_shows_unreachable(
    stack: TrioThread, page: Page, sshd: SSHServer
) -> None:
    page.goto(stack.login_url)
    page.get_by_role("link", name="Environments").click()
    page.get_by_label("Name", exact=True).fill("gone")
    page.get_by_label("Target").fill(f"ssh://root@127.0.0.1:{sshd.port}")
    page.get_by_label("Known hosts file").fill(str(sshd.known_hosts))
    page.get_by_label("Client key file").fill(str(sshd.client_key))
    page.get_by_role("button", name="Connect").click()
    host = page.locator("tr[data-environment]").filter(has_text="/environments/ssh/gone")
    expect(host.locator(".env-state .state")).to_have_text("reachable")
    # The host goes away: its sshd and every connection it serves (all started by
    # this test's fixture).
    for pid in [sshd.pid, *descendants(sshd.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    page.get_by_role("button", name="Check again").click()
    expect(host.locator(".env-state .state")).to_have_text("unreachable")
    expect(host.locator(".env-state .error")).not_to_be_empty()


def test_add_use_and_remove_a_docker_container(
    stack: TrioThread, page: Page, docker: DockerForTests, tmp_path: Path
) -> None:
    """The page adds a Docker environment (the test's private dockerd), offers it to
    a new session, and removes it (its container with it)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    page.goto(stack.login_url)
    page.get_by_role("link", name="Environments").click()
    rows = page.locator("tr[data-environment]")
    page.get_by_label("Container name").fill("py")
    page.get_by_label("Image").fill(docker.image)
    page.get_by_label("Workspace").fill(str(workspace))
    page.get_by_label("Docker host").fill(docker.daemon.host)
    page.get_by_role("button", name="Add container").click()
    box = rows.filter(has_text="/environments/docker/py")
    expect(box).to_have_count(1)
    expect(box).to_contain_text("docker")

    page.get_by_role("link", name="Sessions").click()
    page.get_by_role("button", name="New session").click()
    expect(page.get_by_label("Environment").locator("option")).to_contain_text(
        ["/environments/docker/py (docker)", "/environments/local (local)"]
    )

    page.get_by_role("link", name="Environments").click()
    box.get_by_role("button", name="Remove").click()
    expect(box).to_have_count(0)
    assert labelled_containers(docker.daemon, "troupe.managed") == []
