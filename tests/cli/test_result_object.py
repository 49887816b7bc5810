"""The final result object of ``--output-format json`` / ``stream-json`` carries
status, the final text, error, token usage, duration, the session id, and the cost
at the catalog's list prices when the model is priced (null when it is not)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from actors.models.client import get_model_info
from protocol.llm import Usage
from tests.cli.conftest import Home, mock_llm, shell_then_text

USAGE = {"input": 1_000_000, "output": 100_000}


def result_of(stdout: bytes) -> dict[str, Any]:
    return json.loads(stdout.decode().splitlines()[-1])


async def test_a_priced_model_reports_its_cost(home: Home) -> None:
    script = shell_then_text("echo priced", final="Priced answer.", usage=USAGE)
    script["turns"][-1]["usage"] = USAGE
    async with mock_llm(script) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--model", "gpt-5", "--output-format", "json",
            "count the cost",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = result_of(done.stdout)
    info = get_model_info("gpt-5")
    assert info is not None
    one_call = info.cost(Usage(input_tokens=1_000_000, output_tokens=100_000))
    assert one_call is not None and one_call > 0
    assert result["cost_usd"] == pytest.approx(2 * one_call)
    assert result["status"] == "done" and result["is_error"] is False
    assert result["result"] == "Priced answer." and result["error"] is None
    assert result["usage"]["input_tokens"] == 2_000_000
    assert result["usage"]["output_tokens"] == 200_000
    assert result["session_id"].startswith("s-") and result["duration_ms"] >= 0


async def test_an_unpriced_model_reports_no_cost(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "local", "usage": USAGE}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--model", "my-local-model",
            "--output-format", "stream-json", "what does it cost",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = result_of(done.stdout)
    assert result["type"] == "result" and result["cost_usd"] is None
    assert result["result"] == "local" and result["usage"]["input_tokens"] == 1_000_000


async def test_the_terminal_status_line_shows_the_cost(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "cheap", "usage": USAGE}]}) as mock:
        done = await home.troupe(
            "run", "--base-url", mock.base_url, "--model", "gpt-5-mini", "status please"
        )
    assert done.returncode == 0, done.stderr
    info = get_model_info("gpt-5-mini")
    assert info is not None
    cost = info.cost(Usage(input_tokens=1_000_000, output_tokens=100_000))
    last = done.stdout.decode().splitlines()[-1]
    assert last.startswith("✓ done · 1 turn · 1000000 in / 100000 out tokens")
    assert f"${cost:.4f}" in last
