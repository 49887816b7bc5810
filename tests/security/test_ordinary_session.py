# ruff: noqa: E501  (scripted commands read best on one line)
"""Issue 30's third acceptance point: an ordinary coding session still flows under
the default settings (sandbox on). A scripted model edits code, runs the tests,
uses git status/diff/add/commit, makes a venv and installs a local wheel into it,
and runs ``npm test``: no question is asked and every step succeeds."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path
from typing import Any

import msgspec

from actors.mockllm import Script, serve_mock_llm
from protocol.client import connect
from protocol.wire import CreateSession
from tests.security.rows import Row
from tests.security.runner import Outcome, Run, drive, pids_cgroup, session_config, troupe_serve
from tests.security.world import World


def _wheel(directory: Path) -> Path:
    """A tiny pure-Python wheel, built by hand (no network, no build backend)."""
    files = {
        "tiny/__init__.py": b"X = 42\n",
        "tiny-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tiny\nVersion: 0.1\n",
        "tiny-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tiny-0.1.dist-info/RECORD,,")
    path = directory / "tiny-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr("tiny-0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


STEPS = [
    _call(
        "r001s0c0", "write_file", file_path="calc.py", content="def add(a, b):\n    return a - b\n"
    ),
    _call(
        "r001s1c0",
        "write_file",
        file_path="test_calc.py",
        content="import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    ),
    _call(
        "r001s2c0",
        "apply_patch",
        patch="*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch",
    ),
    _call("r001s3c0", "shell", command="python3 -m unittest -q test_calc"),
    _call("r001s4c0", "shell", command="git status --short && git diff HEAD --stat"),
    _call(
        "r001s5c0",
        "shell",
        command="git add -A && git commit -qm 'add calc' && git log --oneline -1",
    ),
    _call(
        "r001s6c0",
        "shell",
        command="python3 -m venv .venv && .venv/bin/pip install -q --no-index dist/tiny-0.1-py3-none-any.whl"
        " && .venv/bin/python -c 'import tiny; print(tiny.X)'",
        timeout_ms=120_000,
    ),
    _call("r001s7c0", "shell", command="npm test", timeout_ms=60_000),
    {"text": "Done: calc fixed, tests pass, committed, wheel installed, npm test passes."},
]


async def test_ordinary_coding_session_asks_nothing_and_succeeds(seen_tmp_path: Path) -> None:
    world = World(seen_tmp_path)
    script = msgspec.convert({"conversations": [{"match": "ORDINARY::", "turns": STEPS}]}, Script)
    async with serve_mock_llm(script) as mock:
        world.build([], mock.base_url)
        ws = world.make_workspace("ordinary")
        (ws / "dist").mkdir()
        _wheel(ws / "dist")
        (ws / "package.json").write_text(
            '{"name": "p", "version": "1.0.0", "scripts": {"test": "node test.js"}}\n'
        )
        (ws / "test.js").write_text(
            "require('assert').strictEqual(1 + 1, 2); console.log('js ok');\n"
        )
        row = Row(key="r001", cls="ordinary", name="session", steps=())
        outcomes = {"r001": Outcome(row)}
        run = Run("default", outcomes, [], 0.0)
        async with (
            pids_cgroup() as cgroup,
            troupe_serve(world, world.root, cgroup) as served,
            connect(*served) as client,
        ):
            config = session_config("default")
            created = await client.request(CreateSession, working_dir=str(ws), config=config)
            session = created.session.session_id
            await drive(
                client, session, "ORDINARY:: fix calc", outcomes, {"r001": row}, world, ws, run
            )
    calls = outcomes["r001"].calls
    assert run.asks == 0, [c.decisions for c in calls.values()]
    assert len(calls) == 8 and all(c.ended for c in calls.values()), sorted(calls)
    failed = {
        cid: c.output
        for cid, c in calls.items()
        if c.is_error or (c.tool == "shell" and "[exit code: 0" not in c.output)
    }
    assert not failed
    assert "42" in calls["r001s6c0"].output
    assert "js ok" in calls["r001s7c0"].output
    assert (ws / "calc.py").read_text().endswith("return a + b\n")
