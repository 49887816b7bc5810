"""``pip install`` of a built wheel works outside the source tree (issue 31): the
wheel is built from this tree, installed into a fresh virtual environment in a
temporary directory, and its ``troupe`` runs ``demo`` and ``mock-llm`` (the web
page's files and the model catalog, package data, are inside), ``run``, ``serve``
and ``acp``, with no extra installed (no psycopg: a SQLite store needs none)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import KEYS, REPO

GUARD = 600  # seconds: building and installing with pip's cache


def _run(*command: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=GUARD, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def test_the_wheel_installs_and_runs_outside_the_tree(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (*KEYS, "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp_path / "home"), TROUPE_DATA_DIR=str(tmp_path / "data"), NO_COLOR="1")
    wheels = tmp_path / "wheels"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w",
         wheels, REPO, cwd=tmp_path, env=env)  # fmt: skip
    (wheel,) = wheels.glob("troupe_agents-*.whl")
    venv = tmp_path / "venv"
    # Without a pip of its own (ensurepip's copy costs seconds): this pip installs into
    # it (--python). --no-compile: byte-compiling every dependency is CPU the check
    # does not need.
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=env)
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
         "--no-compile", wheel, cwd=tmp_path, env=env)  # fmt: skip
    absent = _run(venv / "bin" / "python", "-c", "import importlib.util as u; "
                  "print(u.find_spec('psycopg') is None)", cwd=tmp_path, env=env)  # fmt: skip
    assert absent.stdout.strip() == "True", "the postgres extra came with a plain install"
    work = tmp_path / "work"
    work.mkdir()
    located = _run(venv / "bin" / "python", "-c",
                   "import actors, actors.web, pathlib; p = pathlib.Path(actors.web.__file__)"
                   ".parent; print(actors.__file__); print(sorted(x.name for x in "
                   "(p / 'static').iterdir()))", cwd=work, env=env)  # fmt: skip
    assert str(REPO) not in located.stdout.splitlines()[0], "imported from the source tree"
    assert "app.js" in located.stdout and "index.html" in located.stdout
    # the wheel's metadata carries actors.__version__, the one place it is written
    import actors

    shown = _run(venv / "bin" / "troupe", "--version", cwd=work, env=env)
    assert shown.stdout.strip() == f"troupe {actors.__version__}", shown.stdout
    assert wheel.name.startswith(f"troupe_agents-{actors.__version__}-"), wheel.name
    demo = _run(venv / "bin" / "troupe", "demo", "--pace", "0", cwd=work, env=env)
    assert "✓" in demo.stdout or "done" in demo.stdout, demo.stdout[-1000:]
    mock = subprocess.Popen([venv / "bin" / "troupe", "mock-llm"], cwd=work, env=env,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert mock.stdout is not None
        url = mock.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        run = _run(venv / "bin" / "troupe", "run", "--base-url", url, "hello", cwd=work, env=env)
        assert "✓ done" in run.stdout, run.stdout
        _serves(venv, work, env)
        _answers_acp(venv, url, work, env)
    finally:
        mock.terminate()
        mock.wait(30)


def _serves(venv: Path, work: Path, env: dict[str, str]) -> None:
    """``troupe serve`` reaches its listening line (a plain install once failed
    there: the fleet's check imported the PostgreSQL backend, and so psycopg)."""
    served = subprocess.Popen(
        [venv / "bin" / "troupe", "serve", "--port", "0"], cwd=work, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert served.stdout is not None
        line = served.stdout.readline()
    finally:
        served.terminate()
        _, err = served.communicate(timeout=30)
    assert line.startswith("troupe server listening on "), (line, err[-2000:])


def _answers_acp(venv: Path, url: str, work: Path, env: dict[str, str]) -> None:
    """``troupe acp`` answers ``initialize`` and opens a session (``session/new``
    starts its server in process, as ``serve`` does)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new",
         "params": {"cwd": str(work), "mcpServers": []}},
    ]  # fmt: skip
    acp = subprocess.Popen(
        [venv / "bin" / "troupe", "acp", "--base-url", url], cwd=work, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert acp.stdin is not None and acp.stdout is not None
    replies: dict[int, dict[str, object]] = {}
    try:
        for request in requests:
            acp.stdin.write(json.dumps(request) + "\n")
            acp.stdin.flush()
            while request["id"] not in replies and (line := acp.stdout.readline()):
                message = json.loads(line)
                if "id" in message:
                    replies[message["id"]] = message
            if request["id"] not in replies:
                break
    finally:
        acp.stdin.close()
        acp.terminate()
        acp.wait(30)
    assert acp.stderr is not None
    assert "result" in replies.get(2, {}), (replies, acp.stderr.read()[-2000:])
