"""The ``troupe`` command as a user runs it: a real process, in a clean environment
(its own HOME, config and data directories, no provider keys), against real
servers: ``troupe mock-llm`` (in this process, so the test can read the request
bodies it received, or as its own process) and ``troupe serve``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from actors.mockllm import MockLLMServer, Script, serve_mock_llm

REPO = Path(__file__).resolve().parents[2]
HANG_GUARD = 60
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
        "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL", "TROUPE_TOKEN",
        "TROUPE_DEBUG", "TROUPE_CONFIG")  # fmt: skip


@dataclass
class Home:
    """A user's machine in a temporary directory."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def config(self) -> Path:
        return self.root / "config" / "troupe" / "config.toml"

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "actors.cli", *args]

    async def troupe(
        self, *args: str, stdin: bytes | None = None, cwd: Path | None = None, **env: str
    ) -> subprocess.CompletedProcess[bytes]:
        """Run the command to its end (a hang guard, never a timing assertion)."""
        with trio.fail_after(HANG_GUARD):
            return await trio.run_process(
                self.argv(*args),
                stdin=stdin if stdin is not None else b"",
                capture_stdout=True,
                capture_stderr=True,
                check=False,
                cwd=cwd or self.work,
                env={**self.env, **env},
            )

    def start(self, *args: str, cwd: Path | None = None, **options: Any) -> subprocess.Popen[Any]:
        """Start the command and leave it running."""
        return subprocess.Popen(self.argv(*args), cwd=cwd or self.work, env=self.env, **options)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    root = Path(os.path.realpath(tmp_path))
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        TROUPE_DATA_DIR=str(root / "data"),
        PYTHONPATH=str(REPO),
        NO_COLOR="1",
    )
    for directory in ("home", "work", "data", "config/troupe"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    return Home(root, env)


def one_line(stderr: bytes) -> str:
    """The single line a failure must print: no traceback, nothing else."""
    text = stderr.decode()
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{text}"
    assert "Traceback" not in text and "Exception" not in text, text
    assert lines[0].startswith("troupe "), lines[0]
    return lines[0]


def request_bodies(mock: MockLLMServer) -> list[Any]:
    return [request.json() for request in mock.requests if request.method == "POST"]


@asynccontextmanager
async def mock_llm(script: dict[str, Any]) -> AsyncIterator[MockLLMServer]:
    async with serve_mock_llm(msgspec.convert(script, Script)) as server:
        yield server


def shell_then_text(*commands: str, final: str = "All done.", **turn: Any) -> dict[str, Any]:
    """A script: one shell call per command, then a final answer."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "shell", "arguments": {"command": c}}], **turn} for c in commands
    ]
    return {"turns": [*turns, {"text": final}], "repeat": False}


Predicate = Callable[[MockLLMServer], bool]


def text_of(body: Any) -> str:
    """Every string in a request body, joined: for 'the history is in there' checks."""
    return msgspec.json.encode(body).decode()
