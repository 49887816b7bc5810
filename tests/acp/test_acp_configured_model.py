"""An editor's session (``troupe acp``, driven by the official ACP SDK client) runs
on the configured model (issue 31, point 3): ``model`` in the user's config file
reaches the model request, as it does for ``troupe run``."""

from __future__ import annotations

import os
from pathlib import Path

import trio

from tests.acp.test_acp_sdk_client import drive, require_client
from tests.cli.conftest import mock_llm, request_bodies


async def test_an_acp_session_runs_on_the_config_file_model(tmp_path: Path) -> None:
    require_client()
    config = tmp_path / "config"
    (config / "troupe").mkdir(parents=True)
    (config / "troupe" / "config.toml").write_text('model = "editor-model-5"\n')
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    env.pop("TROUPE_CONFIG", None)
    async with mock_llm({"turns": [{"text": "hello editor"}]}) as mock:
        result = await trio.to_thread.run_sync(
            lambda: drive(tmp_path, mock.base_url, profile="openai", env=env, prompts=["hi"])
        )
        bodies = request_bodies(mock)
    assert "error" not in result, result
    assert result["prompts"] == [{"stopReason": "end_turn"}]
    assert [body["model"] for body in bodies] == ["editor-model-5"]


async def test_an_acp_session_runs_on_the_model_flag(tmp_path: Path) -> None:
    require_client()
    async with mock_llm({"turns": [{"text": "hello editor"}]}) as mock:
        result = await trio.to_thread.run_sync(
            lambda: drive(
                tmp_path,
                mock.base_url,
                profile="openai",
                prompts=["hi"],
                command_extra=["--model", "flag-model-2"],
            )
        )
        bodies = request_bodies(mock)
    assert "error" not in result, result
    assert [body["model"] for body in bodies] == ["flag-model-2"]
