"""Run by test_environment_kind.py on copies where docs/environment-kinds.md's toy
kind is built in (its spec in ``protocol/environment_specs.py``, its ``KIND`` in
``builtin_kinds()``): a real server adds one over the WebSocket from a tagged spec,
refuses a spec its check refuses, runs a command in it, and after a restart has it
again from the store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from actors.server.server import RunningServer, ServerConfig, run_server
from protocol import environment_specs
from protocol.client import RequestError, connect
from protocol.wire import AddEnvironment, ExecInEnvironment, ListEnvironments

HANG_GUARD = 60


async def serving(root: Path, task: Any) -> None:
    """Start a server on ``root/data``, run ``task(client)``, stop the server."""
    config = ServerConfig(data_dir=root / "data", port=0, working_dir=root, advertise=False)
    async with trio.open_nursery() as nursery:
        server: RunningServer = await nursery.start(run_server, config)
        async with connect(server.url, server.token) as client:
            await task(client)
        server.stop()


async def main(root: Path) -> None:
    spec_type: Any = vars(environment_specs)["ProcessSpec"]  # the kind's spec, on the wire
    box = root / "box"
    box.mkdir()

    async def first(client: Any) -> None:
        try:
            await client.request(AddEnvironment, name="bad", spec=spec_type(root="relative"))
        except RequestError as error:
            print("refused:", error)
        else:
            raise AssertionError("a relative root was accepted")
        added = await client.request(AddEnvironment, name="toy", spec=spec_type(root=str(box)))
        print("added:", added.environment.address, added.environment.kind)
        ran = await client.request(ExecInEnvironment, environment="toy", command="echo hi; pwd")
        print("ran:", repr(ran.result.stdout), ran.result.exit_code)

    async def again(client: Any) -> None:
        listed = await client.request(ListEnvironments)
        print("after a restart:", sorted((e.address, e.kind) for e in listed.environments))
        ran = await client.request(ExecInEnvironment, environment="toy", command="pwd")
        print("ran again:", repr(ran.result.stdout))

    with trio.fail_after(HANG_GUARD):
        await serving(root, first)
        await serving(root, again)


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]))
