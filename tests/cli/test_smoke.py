"""``troupe smoke``: the spec's integration smoke test, here against ``troupe
mock-llm`` (its own process) scripted with the answers a capable model gives; and
a model that does nothing, to show that the checks fail."""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import trio

from actors.commands.smoke_steps import STEPS, mock_script
from tests.cli.conftest import Home, one_line


async def smoke_against(home: Home, script: dict[str, Any], *args: str) -> tuple[int, str]:
    path = trio.Path(home.root / "script.json")
    await path.write_text(json.dumps(script))
    mock = home.start("mock-llm", "--script", str(path), stdout=subprocess.PIPE)
    try:
        assert mock.stdout is not None
        url = (await trio.to_thread.run_sync(mock.stdout.readline)).decode().strip()
        done = await home.troupe("smoke", "--base-url", url, *args)
    finally:
        mock.terminate()
        mock.wait()
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def test_every_step_passes_on_every_wire(home: Home) -> None:
    code, out = await smoke_against(home, mock_script(), "--provider", "all")
    assert code == 0, out
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["openai"],
            ["anthropic"], ["gemini"]) and "pass" in line.split()]  # fmt: skip
    assert len(rows) == 3 * len(STEPS) == 21
    assert "event output 100004 chars; model saw the marker: yes" in out
    assert out.count("7/7 passed") == 3


async def test_a_model_that_does_nothing_fails(home: Home) -> None:
    code, out = await smoke_against(home, {"turns": [{"text": "I will not."}]}, "--provider",
                                    "openai", "--model", "gpt-5-mini")  # fmt: skip
    assert code == 1
    assert "hello.py was not created" in out and "0/7 passed" in out
    assert re.search(r"cost: \$0\.\d{4,6}$", out, flags=re.MULTILINE), "priced by the catalog"


async def test_no_key_is_exit_2(home: Home) -> None:
    done = await home.troupe("smoke")
    assert done.returncode == 2
    assert "OPENAI_API_KEY" in one_line(done.stderr)
