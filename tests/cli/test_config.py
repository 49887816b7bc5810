"""Config files: the user's, the project's, flags over both; ``troupe config`` says
where each value came from, and ``troupe run`` uses the same values."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.conftest import Home, mock_llm, one_line, request_bodies


async def test_project_beats_user_and_flags_beat_both(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "ok"}]}) as mock:
        home.config.write_text(
            f'model = "user-model"\nbase_url = "{mock.base_url}"\nreasoning_effort = "low"\n'
            '[ssh_hosts.build-box]\ntarget = "ssh://dev@build.example.com"\n'
        )
        (home.work / ".troupe").mkdir()
        (home.work / ".troupe" / "config.toml").write_text('model = "project-model"\n')
        (home.work / "sub").mkdir()

        shown = await home.troupe("config", "--json", cwd=home.work / "sub")
        assert shown.returncode == 0, shown.stderr
        config = json.loads(shown.stdout)
        settings = config["settings"]
        assert settings["model"] == {
            "value": "project-model",
            "source": str(home.work / ".troupe" / "config.toml"),
        }
        assert settings["base_url"]["source"] == str(home.config)
        assert settings["provider"]["source"] == "default"
        assert config["ssh_hosts"] == {"build-box": "ssh://dev@build.example.com"}
        assert settings["api_key"] == {"value": False, "source": "not set"}

        flagged = await home.troupe("config", "--json", "--model", "flag-model")
        assert json.loads(flagged.stdout)["settings"]["model"]["source"] == "--model"

        from_files = await home.troupe("run", "hello", cwd=home.work / "sub")
        from_flag = await home.troupe("run", "--model", "flag-model", "hello")
        assert from_files.returncode == 0 and from_flag.returncode == 0, from_files.stderr
        bodies = request_bodies(mock)
    assert [b["model"] for b in bodies] == ["project-model", "flag-model"]
    assert bodies[0]["reasoning"]["effort"] == "low"


async def test_provider_sections_and_key_variables(home: Home) -> None:
    home.config.write_text(
        'provider = "anthropic"\n[providers.anthropic]\nmodel = "claude-x"\n'
        'api_key_env = "MY_CLAUDE_KEY"\n'
    )
    missing = await home.troupe("config")
    assert missing.returncode == 2
    assert "MY_CLAUDE_KEY" in one_line(missing.stderr)
    shown = await home.troupe("config", MY_CLAUDE_KEY="sk-secret-value")
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert "claude-x" in text and "$MY_CLAUDE_KEY" in text
    assert "sk-secret-value" not in text


async def test_a_bad_config_file_is_one_line(home: Home) -> None:
    home.config.write_text("modle = 'typo'\n")
    done = await home.troupe("run", "hello")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert str(home.config) in line and "modle" in line
    home.config.write_text("model = \n")
    broken = await home.troupe("config")
    assert broken.returncode == 2 and "not valid TOML" in one_line(broken.stderr)
    home.config.write_text('wire = "grpc"\n')
    wire = await home.troupe("config")
    assert wire.returncode == 2 and "openai-chat" in one_line(wire.stderr)


async def test_config_shows_the_sandbox_setting_its_state_and_why(home: Home) -> None:
    """The setting comes from the policy (or ``--sandbox``); what it comes to is
    probed on this machine: bwrap found and running, or not found."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    shown = (await home.troupe("config")).stdout.decode()
    assert "sandbox           auto -> on (bwrap works); network off (loopback only)" in shown
    no_bwrap = home.root / "bin-without-bwrap"
    no_bwrap.mkdir()
    missing = (await home.troupe("config", PATH=str(no_bwrap))).stdout.decode()
    assert "auto -> off: bwrap not found; commands are only classified" in missing
    refused = await home.troupe("config", "--sandbox", "on", "--json", PATH=str(no_bwrap))
    assert json.loads(refused.stdout)["sandbox"] == {
        "setting": "on",
        "effective": "refused",
        "network": "off (loopback only)",
        "reason": "bwrap not found; every command is refused",
    }
    off = (await home.troupe("config", "--policy", "permissive")).stdout.decode()
    assert "sandbox           off, set by policy permissive" in off
    sandboxed = json.loads((await home.troupe("config", "--policy", "sandboxed", "--json")).stdout)
    assert sandboxed["sandbox"]["setting"] == "on" and sandboxed["sandbox"]["effective"] == "on"


async def test_run_sandbox_flag_reaches_the_session_and_off_is_in_the_header(home: Home) -> None:
    """``--sandbox off`` is explicit: the header says so, and the command sees the
    host's processes; by default it sees only its own PID namespace."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    count = "ls -d /proc/[0-9]* | wc -l > count.txt"
    script = {"turns": [{"tool_calls": [{"name": "shell", "arguments": {"command": count}}]},
                        {"text": "counted"}], "repeat": True}  # fmt: skip
    seen: dict[str, int] = {}
    for flags in ((), ("--sandbox", "off")):
        async with mock_llm(script) as mock:
            done = await home.troupe("run", "--base-url", mock.base_url, *flags, "count")
        assert done.returncode == 0, done.stderr
        header = done.stdout.decode() + done.stderr.decode()
        assert ("sandbox off: commands are only classified" in header) == bool(flags), header
        seen[" ".join(flags) or "default"] = int((home.work / "count.txt").read_text())
    assert seen["default"] < 10 < seen["--sandbox off"]
