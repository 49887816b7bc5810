"""The environments page: add an SSH host (the test's own real sshd) and remove it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.environments.conftest import sshd as sshd  # the fixture: a real OpenSSH sshd
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
    page.get_by_label("Name").fill("box")
    page.get_by_label("Target").fill(f"ssh://root@127.0.0.1:{sshd.port}")
    page.get_by_label("Known hosts file").fill(str(sshd.known_hosts))
    page.get_by_label("Client key file").fill(str(sshd.client_key))
    page.get_by_role("button", name="Connect").click()
    host = rows.filter(has_text="/environments/ssh/box")
    expect(host).to_have_count(1)
    expect(host).to_contain_text("ssh")

    page.get_by_role("link", name="Sessions").click()
    page.get_by_role("button", name="New session").click()
    expect(page.get_by_label("Environment").locator("option")).to_contain_text(
        ["/environments/local (local)", "/environments/ssh/box (ssh)"]
    )

    page.get_by_role("link", name="Environments").click()
    host.get_by_role("button", name="Remove").click()
    expect(host).to_have_count(0)
    expect(rows.filter(has_text="/environments/local")).to_have_count(1)
