"""A ``bwrap`` probe cut short leaves nothing behind (found in the suite's own
runs: sandbox PID 1s of probes, orphaned for hours). A test's server that stops
just after its local environment started the probe cancels it; signalling bwrap
alone, before the sandbox's PID 1 had bound itself to bwrap, left that PID 1
running for good (a namespace's PID 1 ignores SIGTERM). The probe runs in a
process group of its own, and cutting it short kills the group."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import trio

from environments.sandbox import find_bwrap
from tests.waiting import HANG_GUARD, wait_until

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bwrap missing")

# Many probes, each cancelled at a later moment of its start (from at once to a
# few milliseconds in), so some land inside bwrap's setup.
_CUT_SHORT = """
import trio
from environments.sandbox import find_bwrap, probe_local

async def main():
    bwrap = find_bwrap()
    for step in range(60):
        with trio.move_on_after(step * 0.0003):
            await probe_local(bwrap)

trio.run(main)
"""


def _marked(marker: str) -> list[int]:
    """Processes (not zombies) whose environment holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if "Z" in (entry / "stat").read_text().split(")")[-1].split()[0]:
                continue
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@needs_bwrap
async def test_probes_cut_short_leave_no_process() -> None:
    marker = f"TROUPE_PROBE_TEST={uuid.uuid4().hex}"
    name, _, value = marker.partition("=")
    with trio.fail_after(HANG_GUARD):
        done = await trio.run_process(
            [sys.executable, "-c", _CUT_SHORT], env={**os.environ, name: value},
            stdout=subprocess.DEVNULL, capture_stderr=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    try:
        await wait_until(lambda: not _marked(marker), what="every probe's processes to end")
    finally:
        for pid in _marked(marker):  # the failure's leftovers, not the next test's
            os.kill(pid, 9)
