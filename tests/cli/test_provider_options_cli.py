"""``--provider-option KEY=VALUE`` and the config file's ``[provider_options]``
as a user runs them: a real ``troupe run`` process against the scripted provider,
whose request bodies carry them; bad ones are one line and exit code 2."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Home, mock_llm, one_line, request_bodies

SCRIPT = {"turns": [{"text": "ok"}], "repeat": False}


@pytest.mark.parametrize("wire", ["openai", "openai-chat", "anthropic", "gemini"])
async def test_flags_and_the_config_file_reach_the_body(home: Home, wire: str) -> None:
    home.config.write_text('[provider_options]\nservice_tier = "auto"\nfrom_file = 1\n')
    async with mock_llm(SCRIPT) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--wire", wire,
            "--provider-option", "service_tier=flex",  # the flag wins over the file
            "--provider-option", 'probe={"a": [1, 2]}',
            "--provider-option", "count=3",
            "--provider-option", "on=true",
            "--provider-option", "words=not json, a string",
            "hello",
        )  # fmt: skip
        bodies = request_bodies(mock)
    assert done.returncode == 0, done.stderr.decode()
    (body,) = bodies
    assert body["service_tier"] == "flex" and body["from_file"] == 1
    assert body["probe"] == {"a": [1, 2]} and body["count"] == 3 and body["on"] is True
    assert body["words"] == "not json, a string"


async def test_troupe_config_shows_them(home: Home) -> None:
    home.config.write_text('[provider_options]\nservice_tier = "flex"\n')
    done = await home.troupe("config", "--provider-option", "seed=7")
    assert done.returncode == 0, done.stderr.decode()
    shown = done.stdout.decode()
    assert "provider_options" in shown and "'seed': 7" in shown and "flex" in shown


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--provider-option", "model=gpt-other"], "'model' is a field Troupe sets itself"),
        (["--provider-option", "stream=false"], "'stream' is a field Troupe sets itself"),
        (["--provider-option", "no-equals-sign"], "expected KEY=VALUE"),
        (["--provider-option", "=3"], "expected KEY=VALUE"),
    ],
)
async def test_bad_options_are_one_line_and_exit_2(home: Home, given: list[str], said: str) -> None:
    done = await home.troupe("run", "--base-url", "http://127.0.0.1:9/v1", *given, "hello")
    assert done.returncode == 2
    assert said in one_line(done.stderr)


async def test_a_bad_config_file_table_is_one_line(home: Home) -> None:
    home.config.write_text("[provider_options]\ntools = []\n")
    done = await home.troupe("run", "--base-url", "http://127.0.0.1:9/v1", "hello")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "'tools' is a field Troupe sets itself" in line and str(home.config) in line


async def test_a_projects_options_wait_for_troupe_trust(home: Home) -> None:
    """``store = true`` in a planted project file would keep the conversation at
    the provider: ignored with the one line until the project is trusted."""
    (home.work / ".troupe").mkdir()
    (home.work / ".troupe" / "config.toml").write_text("[provider_options]\nstore = true\n")
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        done = await home.troupe("run", "--base-url", mock.base_url, "hello")
        assert done.returncode == 0, done.stderr.decode()
        (line,) = [x for x in done.stderr.decode().splitlines() if "ignored" in x]
        assert "provider_options" in line
        assert request_bodies(mock)[0].get("store") is not True
        assert (await home.troupe("trust")).returncode == 0
        again = await home.troupe("run", "--base-url", mock.base_url, "hello")
        assert again.returncode == 0, again.stderr.decode()
        assert request_bodies(mock)[1]["store"] is True
