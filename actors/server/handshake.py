"""The handshake: Origin and Authorization at the HTTP upgrade, then the hello frame.

Refusals at the upgrade are HTTP statuses (403 for a foreign Origin, 401 for a
wrong bearer token), so a browser or a client library reports them as such. After
the upgrade every refusal is an ``error`` frame followed by a close with an
application code: 4001 unauthorized, 4002 no hello, 4003 version mismatch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import msgspec
import trio

from actors.access.auth import (
    Origins,
    bearer,
    cookie_from,
    origin_allowed,
    token_matches,
    web_cookie_valid,
)
from protocol.wire import (
    CLOSE_EXPECTED_HELLO,
    CLOSE_UNAUTHORIZED,
    CLOSE_VERSION_MISMATCH,
    PROTOCOL_VERSION,
    Codec,
    ErrorReply,
    FrameError,
    Hello,
)

if TYPE_CHECKING:  # the WebSocket stack comes with the first upgrade
    from trio_websocket import WebSocketConnection, WebSocketRequest

HELLO_TIMEOUT = 10.0


class Policy(msgspec.Struct, frozen=True):
    token: str
    origins: Origins


async def upgrade(request: WebSocketRequest, policy: Policy) -> tuple[WebSocketConnection, bool]:
    """Accept the upgrade, or refuse it (raises Refused). The flag says whether the
    Authorization header or the web page's login cookie already proved the token."""
    headers = {name.decode("latin-1").lower(): value.decode("latin-1")
               for name, value in request.headers}  # fmt: skip
    origin = headers.get("origin")
    if not origin_allowed(origin, policy.origins):
        await request.reject(403, body=f"origin {origin} is not allowed\n".encode())
        raise Refused
    if "authorization" in headers:
        if not token_matches(policy.token, bearer(headers["authorization"])):
            await request.reject(401, body=b"invalid bearer token\n")
            raise Refused
        return await request.accept(), True
    if web_cookie_valid(policy.token, cookie_from(headers.get("cookie"))):
        return await request.accept(), True  # the web page, logged in (actors/web)
    return await request.accept(), False


class Refused(Exception):
    """The handshake was refused; the client has been told why."""


async def read_hello(websocket: WebSocketConnection, policy: Policy, authorized: bool) -> Hello:
    """The client's hello, checked; otherwise an error frame, a close, and Refused."""
    codec = Codec("json")
    with trio.move_on_after(HELLO_TIMEOUT):
        message = await websocket.get_message()
        try:
            frame = codec.decode(message if isinstance(message, str) else message.decode())
        except (FrameError, UnicodeDecodeError) as error:
            await _refuse(websocket, CLOSE_EXPECTED_HELLO, "bad_frame", f"expected hello: {error}")
        if not isinstance(frame, Hello):
            await _refuse(
                websocket, CLOSE_EXPECTED_HELLO, "bad_frame", "the first frame must be hello"
            )
        if frame.version != PROTOCOL_VERSION:
            text = f"this server speaks protocol version {PROTOCOL_VERSION}, not {frame.version}"
            await _refuse(websocket, CLOSE_VERSION_MISMATCH, "version_mismatch", text)
        if not authorized and not token_matches(policy.token, frame.token):
            if frame.token is None:
                text = "a bearer token is required (Authorization header or hello.token)"
            else:
                text = "the token in hello is not valid for this server"
            await _refuse(websocket, CLOSE_UNAUTHORIZED, "unauthorized", text)
        return frame
    await _refuse(websocket, CLOSE_EXPECTED_HELLO, "bad_frame", "no hello frame in time")


async def _refuse(websocket: WebSocketConnection, code: int, error: str, text: str) -> NoReturn:
    codec = Codec("json")
    with trio.move_on_after(2):
        await websocket.send_message(codec.encode(ErrorReply(None, error, text)))
        await websocket.aclose(code, text[:120])
    raise Refused
