"""``troupe run`` turns Python's cyclic garbage collector off while it starts and
on again once its session is open (issue #36): the collections that loading the
runtime triggers free nothing and cost tens of milliseconds."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import trio

from actors.commands.headless import Startup
from tests.cli.conftest import HANG_GUARD, Home, mock_llm

_RUN_AND_SAY = """
import gc, json, sys
import actors.commands.run_async as run_async
from actors.cli import main
seen = []
opened = run_async.open_session
async def open_session(*args, **kwargs):
    seen.append(gc.isenabled())  # while starting
    return await opened(*args, **kwargs)
run_async.open_session = open_session
code = main(sys.argv[1:])
print(json.dumps({"starting": seen, "after": gc.isenabled()}), file=sys.stderr)
sys.exit(code)
"""


async def test_off_while_starting_on_again_after(home: Home) -> None:
    async with mock_llm({"turns": [{"text": "done"}]}) as mock:
        with trio.fail_after(HANG_GUARD):
            done = await trio.run_process(
                [sys.executable, "-c", _RUN_AND_SAY, "run", "--embedded", "--base-url",
                 mock.base_url, "--output-format", "json", "-p", "hi"],
                capture_stdout=True, capture_stderr=True, check=False,
                cwd=home.work, env=home.env,
            )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stderr.decode().splitlines()[-1])
    assert said == {"starting": [False], "after": True}


def test_a_collector_turned_off_by_the_host_stays_off() -> None:
    assert gc.isenabled()
    try:
        gc.disable()
        startup = Startup()
        startup.pause()
        startup.done()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_on_again_when_the_command_ends_early() -> None:
    """A failure before the session opened still turns it back on (``run``'s
    ``finally``); done twice is done once."""
    done = subprocess.run(
        [sys.executable, "-c", "import gc, sys\nfrom actors.cli import main\n"
         "code = main(['run', '--workdir', '/nonexistent', 'x'])\n"
         "print(gc.isenabled(), code)"],
        capture_output=True, timeout=HANG_GUARD, check=False,
    )  # fmt: skip
    assert done.stdout.decode().split() == ["True", "2"], done.stderr
    startup = Startup()
    startup.pause()
    startup.done()
    startup.done()
    assert gc.isenabled()
    gc.unfreeze()  # the test process's own objects go back to the collector
