"""Run by test_protocol_frame.py on copies where docs/extending.md's toy request
(``Ping``) is in ``protocol/wire_requests.py``, ``protocol/wire.py`` and the server's
dispatch: a real server answers it over the WebSocket, in JSON and in msgpack."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from actors.server.server import RunningServer, ServerConfig, run_server
from protocol import wire
from protocol.client import connect

HANG_GUARD = 60


async def main(root: Path) -> None:
    ping: Any = vars(wire)["Ping"]  # the request exists only on the copies
    config = ServerConfig(data_dir=root / "data", port=0, working_dir=root, advertise=False)
    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            server: RunningServer = await nursery.start(run_server, config)
            for encoding in ("json", "msgpack"):
                async with connect(server.url, server.token, encoding=encoding) as client:
                    reply = await client.request(ping)
                    print(encoding, type(reply).__name__, reply.id)
            server.stop()


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]))
