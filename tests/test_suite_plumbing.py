"""How the suite itself runs (tests/scheduling.py, tests/bytecode.py): files handed
to the workers heaviest first with their tests together, the bytecode the
controller writes never stale, and Ctrl-C's meaning kept for the processes the tests
start (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.bytecode import _compile_module
from tests.interpreters import is_shim
from tests.scheduling import WEIGHTS, file_weights, longest_first


def _items(*nodeids: str) -> list[Any]:
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_heaviest_file_first_and_each_files_tests_together_in_order() -> None:
    items = _items("a.py::one", "a.py::two", "b.py::one", "c.py::one", "c.py::two", "d.py::x")
    longest_first(items, {"b.py": 5.0, "c.py": 9.0})
    assert [i.nodeid for i in items] == [
        "c.py::one", "c.py::two", "b.py::one", "a.py::one", "a.py::two", "d.py::x",
    ]  # fmt: skip


def test_every_weighed_file_is_a_test_file_of_the_suite() -> None:
    root = WEIGHTS.parents[1]
    weights = file_weights()
    assert weights, f"{WEIGHTS} lists no file"
    assert [name for name in weights if not (root / name).is_file()] == []


def test_a_same_size_edit_within_the_second_is_never_run_from_a_stale_cache(
    tmp_path: Path,
) -> None:
    module = tmp_path / "calc.py"
    module.write_text("VALUE = 1\n")
    _compile_module(module)
    assert list((tmp_path / "__pycache__").glob("calc.*.pyc")), "no bytecode written"
    stat = module.stat()
    module.write_text("VALUE = 2\n")  # same size; same mtime, as within one second
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", "import calc; print(calc.VALUE)"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout == "2\n"


def test_python3_on_the_runs_path_is_the_interpreter_not_a_pyenv_shim() -> None:
    """tests/interpreters.py: the run's commands start python3 without the shim."""
    found = shutil.which("python3")
    assert not is_shim(found), found


_CHILD_IGNORES_SIGINT = """
import subprocess, sys
if sys.argv[1] == "fixed":
    from tests.conftest import interruptible_children
    interruptible_children()
status = subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout
ignored = int(next(l for l in status.splitlines() if l.startswith("SigIgn:")).split()[1], 16)
print(bool(ignored & (1 << (2 - 1))))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_run_started_ignoring_ctrl_c_starts_processes_that_heed_it() -> None:
    """A run started with SIGINT ignored (a background job of a shell without job
    control) would hand that to every process it starts; tests/conftest.py gives
    them the default again. Without it (the control) the child ignores SIGINT."""

    def started_ignoring(how: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD_IGNORES_SIGINT, how],
            cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True,
            timeout=60, check=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )  # fmt: skip
        return done.stdout.strip()

    assert started_ignoring("as-started") == "True"
    assert started_ignoring("fixed") == "False"
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # this run itself
