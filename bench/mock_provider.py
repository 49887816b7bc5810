"""What the model benchmarks share: the scripted provider in a child process (so the
CPU measured is the client's alone) and a tool that does nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from actors.mockllm import Script
from actors.tools.registry import Tool


def start_mock_llm(*arguments: str) -> tuple[subprocess.Popen[str], str]:
    """``troupe mock-llm ARGUMENTS`` in a child process: the process and its base URL."""
    command = [sys.executable, "-m", "actors.cli", "mock-llm", *arguments]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    return child, next(word for word in line.split() if word.startswith("http"))


def start_scripted(script: Script | dict[str, Any]) -> tuple[subprocess.Popen[str], str]:
    """The provider answering with ``script`` (written to a temporary file)."""
    path = Path(tempfile.mkdtemp()) / "script.json"
    path.write_bytes(msgspec.json.encode(script))
    return start_mock_llm("--script", str(path))


class NoParams(msgspec.Struct, frozen=True):
    pass


async def _noop(arguments: Any, context: Any) -> str:
    return "ok"


NOOP_TOOL = Tool("noop", "Do nothing.", _noop, NoParams)
"""The trivial tool the rounds mode calls: the loop's cost, not a tool's."""
