"""What docs/cli.md, docs/mock-llm.md and the README's command section promise,
run as written (against troupe mock-llm in place of a real model)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import trio

from actors.config import load_config
from actors.mockllm import parse_script
from tests.cli.conftest import REPO, Home, mock_llm

DOCS = REPO / "docs"


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


async def start_mock(home: Home, script_text: str) -> tuple[subprocess.Popen[bytes], str]:
    """``troupe mock-llm --script`` as its own process; returns it and its URL."""
    path = trio.Path(home.root / "script.yaml")
    await path.write_text(script_text)
    mock = home.start("mock-llm", "--script", str(path), stdout=subprocess.PIPE)
    assert mock.stdout is not None
    url = (await trio.to_thread.run_sync(mock.stdout.readline)).decode().strip()
    assert url.startswith("http://127.0.0.1:"), url
    return mock, url


def test_every_script_example_parses() -> None:
    examples = blocks((DOCS / "mock-llm.md").read_text(), "yaml")
    assert len(examples) == 5
    for example in examples:
        parse_script(example, yaml=True)


@pytest.mark.parametrize(
    ("example", "task", "answer", "file"),
    [
        (0, "Write hello.py", "hello.py is written and prints hi.", "hello.py"),
        (2, "Review hello.py", "Reviewed; the subagent added tests.", "test_hello.py"),
    ],
)
async def test_script_examples_run(
    home: Home, example: int, task: str, answer: str, file: str
) -> None:
    script = blocks((DOCS / "mock-llm.md").read_text(), "yaml")[example]
    mock, url = await start_mock(home, script)
    try:
        done = await home.troupe("run", "--base-url", url, task)
    finally:
        mock.terminate()
        mock.wait()
    assert done.returncode == 0, done.stderr
    assert answer in done.stdout.decode()
    assert (home.work / file).exists()


def test_config_example_loads(tmp_path: Path) -> None:
    (example,) = blocks((DOCS / "cli.md").read_text(), "toml")
    path = tmp_path / "config.toml"
    path.write_text(example)
    config = load_config(path)
    assert config.wire == "openai-chat" and config.providers["anthropic"].model
    assert config.ssh_hosts["build-box"].working_dir == "/srv/app"


async def test_error_examples_are_what_the_command_prints(home: Home) -> None:
    text = (DOCS / "cli.md").read_text()
    no_key = await home.troupe("run", "Fix it")
    http = await home.troupe("run", "--connect", "http://127.0.0.1:7707/", "x")
    for done in (no_key, http):
        assert done.stderr.decode().strip() in text


async def test_the_readme_tour_with_a_local_server(home: Home) -> None:
    """The tour's config, with the mock's URL in place of Ollama's, and each of its
    commands as written."""
    readme = (REPO / "README.md").read_text()
    tour = readme[readme.index("**A minute with a local model.**") :]
    config = blocks(tour, "toml")[0]
    flags, commands = (block.strip().splitlines() for block in blocks(tour, "sh")[:2])
    async with mock_llm({"turns": [{"text": "Done."}]}) as mock:
        home.config.write_text(config.replace("http://localhost:11434", mock.base_url))
        for line in [*flags, *commands]:
            line = line.replace("http://localhost:11434", mock.base_url)
            stdin = b""
            if "|" in line:
                feed, line = line.split("|")
                stdin = shlex.split(feed)[1].encode()
            argv = shlex.split(line)
            assert argv[0] == "troupe"
            done = await home.troupe(*argv[1:], stdin=stdin)
            assert done.returncode == 0, (line, done.stderr)
        bodies = [r.json() for r in mock.requests if r.method == "POST"]
    assert {body["model"] for body in bodies} == {"qwen3:8b"}
    assert all(r.path.endswith("/v1/chat/completions") for r in mock.requests)


@pytest.mark.parametrize(
    ("command", "variables"),
    [
        ("run", ["OPENAI_API_KEY", "TROUPE_DATA_DIR", "TROUPE_TOKEN", "TROUPE_CONFIG"]),
        ("serve", ["ANTHROPIC_API_KEY", "TROUPE_DATA_DIR"]),
        ("attach", ["TROUPE_TOKEN", "TROUPE_DATA_DIR"]),
        ("sessions", ["TROUPE_TOKEN"]),
        ("config", ["TROUPE_CONFIG", "GEMINI_API_KEY"]),
        ("smoke", ["OPENAI_API_KEY"]),
        ("mock-llm", ["TROUPE_DEBUG"]),
        ("demo", ["NO_COLOR"]),
        ("schema", ["TROUPE_DEBUG"]),
    ],
)
async def test_help_names_the_environment(home: Home, command: str, variables: list[str]) -> None:
    done = await home.troupe(command, "--help")
    out = done.stdout.decode()
    assert done.returncode == 0 and "Environment variables read:" in out
    for variable in variables:
        assert variable in out, (command, variable)


@pytest.mark.parametrize(
    ("provider", "key", "base", "wire"),
    [
        ("openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "openai_responses"),
        ("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "anthropic"),
        ("gemini", "GEMINI_API_KEY", "GEMINI_BASE_URL", "gemini"),
    ],
)
async def test_the_readme_hosted_tour_needs_only_the_key(
    home: Home, provider: str, key: str, base: str, wire: str
) -> None:
    """ "With a hosted provider, the key is all it takes": the key from the
    environment reaches the provider (the mock stands in for its endpoint)."""
    readme = (REPO / "README.md").read_text()
    hosted = readme[readme.index("**With a hosted provider**") :][:400]
    assert key in hosted and (provider == "openai" or f"--provider {provider}" in hosted)
    chosen = [] if provider == "openai" else ["--provider", provider]
    async with mock_llm({"turns": [{"text": "Hosted hello."}]}) as mock:
        environment = {key: "key-from-env", base: mock.base_url}
        home.env.update(environment)
        done = await home.troupe("run", *chosen, "Say hello")
        (request,) = [r for r in mock.requests if r.method == "POST"]
    assert done.returncode == 0, done.stderr
    assert "Hosted hello." in done.stdout.decode()
    assert request.wire == wire
    assert "key-from-env" in " ".join([*request.headers.values(), request.path])
