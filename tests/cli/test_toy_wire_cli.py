"""The toy wire of tests/session/toy_wire.py, installed (its distribution's entry
point on the path) and used from the command line: ``troupe run --wire toy`` reads
its key variable and speaks through its adapter, with nothing in Troupe naming it."""

from __future__ import annotations

from tests.cli.conftest import REPO, Home, mock_llm
from tests.session.toy_wire import MARK, install


async def test_troupe_run_speaks_an_installed_wire(home: Home) -> None:
    site = install(home.root / "site")
    home.env["PYTHONPATH"] = f"{site}:{REPO}"
    async with mock_llm({"turns": [{"text": "toy answer"}]}) as mock:
        done = await home.troupe(
            "run", "--wire", "toy", "--base-url", mock.base_url, "-p", "hi",
            TOY_API_KEY="toy-key",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (request,) = [r for r in mock.requests if r.method == "POST"]
    assert request.path == "/v1/chat/completions"
    assert request.headers[MARK] == "spoken"
    assert request.headers["authorization"] == "Bearer toy-key"
    assert b"toy answer" in done.stdout
    shown = await home.troupe("config", "--wire", "toy-chat", TOY_API_KEY="toy-key")
    assert shown.returncode == 0, shown.stderr
    assert b"toy-chat" in shown.stdout and b"$TOY_API_KEY" in shown.stdout
