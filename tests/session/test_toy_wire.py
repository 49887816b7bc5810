"""A provider wire added through its descriptor alone (issue #32): a toy package
offers ``toy_chat`` (tests/session/toy_wire.py: an adapter and a descriptor) under
the ``troupe.wires`` entry-point group, and with nothing else changed a session
runs on it against the scripted provider, the config resolver reads its names and
variables, and the model layer builds its endpoints."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from actors.config.resolve import resolve
from actors.models.config import Wire, endpoint_from_env, wire_name
from actors.models.errors import ConfigurationError
from protocol.events import AssistantTextEndEvent, ToolCallEndEvent
from tests.session.conftest import StartAgent
from tests.session.scripts import call, turns
from tests.session.toy_wire import MARK, install


@pytest.fixture
def toy_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(install(tmp_path / "site")))


def test_without_its_package_the_toy_wire_is_unknown() -> None:
    with pytest.raises(ConfigurationError, match="unknown wire 'toy'; known: openai"):
        wire_name("toy")


async def test_a_session_runs_on_a_wire_added_by_its_descriptor(
    toy_installed: None, start_agent: StartAgent
) -> None:
    script = turns([call("write_file", file_path="toy.txt", content="from the toy\n")], "Done.")
    async with start_agent("anthropic", script, wire=cast(Wire, "toy")) as agent:
        await agent.run("write toy.txt")
        assert (agent.workdir / "toy.txt").read_text() == "from the toy\n"
        ended = agent.of(ToolCallEndEvent)
        assert [e.tool_name for e in ended] == ["write_file"] and not ended[0].is_error
        assert agent.of(AssistantTextEndEvent)[-1].text == "Done."
    sent = [request for request in agent.server.requests if request.method == "POST"]
    assert [request.path for request in sent] == ["/v1/chat/completions"] * 2
    assert [request.headers.get(MARK) for request in sent] == ["spoken", "spoken"]
    assert [request.headers.get("authorization") for request in sent] == ["Bearer test-key"] * 2


def test_the_resolver_reads_the_toy_wires_names_and_variables(
    toy_installed: None, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOY_TOKEN": "toy-key",
        "TOY_BASE_URL": "http://127.0.0.1:9/toy",
    }
    for spelling in ("toy", "TOY_CHAT", "toy-chat"):
        settings = resolve({"wire": spelling}, work, env)
        assert settings.values["wire"].value == "toy-chat"
        assert settings.model_wire == "toy_chat"
        assert (settings.api_key.value, settings.api_key.source) == ("toy-key", "$TOY_TOKEN")
        base = settings.values["base_url"]
        assert (base.value, base.source) == ("http://127.0.0.1:9/toy", "$TOY_BASE_URL")
    found = endpoint_from_env("toy-chat", env)
    assert (found.wire, found.base_url, found.api_key) == (
        "toy_chat",
        "http://127.0.0.1:9/toy/v1",
        "toy-key",
    )
    with pytest.raises(ConfigurationError, match=r"toy_chat: set TOY_API_KEY or TOY_TOKEN"):
        endpoint_from_env("toy", {})
