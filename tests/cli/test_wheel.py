"""``pip install`` of a built wheel works outside the source tree (issue 31): the
wheel is built from this tree, installed into a fresh virtual environment in a
temporary directory, and its ``troupe`` runs ``demo`` and ``mock-llm`` (the web
page's files and the model catalog, package data, are inside)."""

from __future__ import annotations

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
    finally:
        mock.terminate()
        mock.wait(30)
