"""``/healthz`` and ``/readyz`` for load balancers: no login, one word, and nothing
else of the server opens without the cookie because of them (real sockets). A
store that cannot write turns ``/readyz`` to 503: see tests/wire/test_store_faults.py."""

from __future__ import annotations

from tests.web.test_auth import http_get
from tests.wire.conftest import StartStack
from tests.wire.conftest import start_stack as start_stack  # the fixture


async def test_probes_answer_without_a_login_and_say_only_ok(start_stack: StartStack) -> None:
    async with start_stack() as stack:
        port = stack.server.port
        for probe in ("/healthz", "/readyz"):
            status, headers, body = await http_get(port, probe)
            assert (status, body) == (200, b"ok\n"), probe
            assert headers["content-type"] == "text/plain"
            assert "set-cookie" not in headers
            assert (await http_get(port, probe, method="POST"))[0] == 405
            assert (await http_get(port, probe + "/x"))[0] == 401  # not a prefix
        # the probes open nothing else: the page and its assets still need the cookie
        assert (await http_get(port, "/app.js"))[0] == 401
