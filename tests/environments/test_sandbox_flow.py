"""An ordinary coding flow still works under the default sandbox, at the
environment level: the default policy's sandbox and variable allowlist, real
bwrap, real git, python3 -m venv with pip installing a local wheel without the
network, and npm test on a local package. (The scripted-session version, with
0 questions asked, lives in tests/security.)"""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio

from actors.kernel import Runtime
from actors.policy.engine import env_allowlist
from actors.policy.presets import policy_preset
from actors.policy.sandbox import sandbox_for
from environments.local import LocalEnvironment
from environments.sandbox import find_bwrap
from protocol.environment import ExecCommand, ExecResult

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bwrap missing")

TEST_FILE = """import unittest
from calc import add

class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

unittest.main()
"""


def make_wheel(directory: Path) -> Path:
    """A minimal pure-Python wheel, ``greet 1.0``, built by hand (no network)."""
    wheel = directory / "greet-1.0-py3-none-any.whl"
    files = {
        "greet/__init__.py": "def hello():\n    return 'hello from the wheel'\n",
        "greet-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greet\nVersion: 1.0\n",
        "greet-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: troupe-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + "greet-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("greet-1.0.dist-info/RECORD", record)
    return wheel


async def test_a_coding_flow_runs_under_the_default_sandbox(
    tmp_path: Path, runtime: Runtime
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    await trio.run_process(["git", "init", "-q", str(work)])
    for key, value in (("user.name", "Dev"), ("user.email", "dev@example.com")):
        await trio.run_process(["git", "-C", str(work), "config", key, value])
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "test_calc.py").write_text(TEST_FILE)
    make_wheel(work)
    policy = policy_preset("interactive")
    sandbox = sandbox_for(policy, str(work))
    assert sandbox is not None and not sandbox.network  # the defaults, unchanged
    ref = await runtime.spawn(LocalEnvironment(work))

    async def run(command: str, timeout_ms: int = 120_000) -> ExecResult:
        request = ExecCommand(
            command, timeout_ms=timeout_ms, sandbox=sandbox, env_allowlist=env_allowlist(policy)
        )
        result = await ref.ask(request, timeout=timeout_ms / 1000 + 30)
        assert result.exit_code == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        return result

    # -B: the fix keeps calc.py's size and lands within the second, so a bytecode
    # cache written by the first run (where caches are on) would still be taken.
    failing = await ref.ask(ExecCommand("python3 -B test_calc.py", sandbox=sandbox))
    assert failing.exit_code != 0  # the bug is there before the edit
    await run("sed -i 's/a - b/a + b/' calc.py")
    await run("python3 -B test_calc.py")
    await run("git add calc.py test_calc.py && git commit -qm 'add calc'")
    await run("echo '# more' >> calc.py")
    status = await run("git status --short calc.py")
    assert status.stdout.strip() == "M calc.py"
    diff = await run("git diff")
    assert "+# more" in diff.stdout
    await run("git add -A . && git commit -qm 'note' && git log --oneline | wc -l")
    await run("python3 -m venv .venv", timeout_ms=300_000)
    await run(".venv/bin/pip install -q --no-index greet-1.0-py3-none-any.whl")
    hello = await run(".venv/bin/python -c 'import greet; print(greet.hello())'")
    assert hello.stdout == "hello from the wheel\n"
    if shutil.which("npm") is not None:
        await _npm_test(work, run)


async def _npm_test(work: Path, run: Callable[[str], Awaitable[ExecResult]]) -> None:
    package = work / "web"
    package.mkdir()
    (package / "package.json").write_text(
        '{"name": "web", "version": "1.0.0", "scripts": {"test": "node test.js"}}\n'
    )
    (package / "test.js").write_text(
        "const assert = require('assert'); assert.strictEqual(1 + 1, 2); console.log('npm ok');\n"
    )
    tested = await run("cd web && npm test")
    assert "npm ok" in tested.stdout
