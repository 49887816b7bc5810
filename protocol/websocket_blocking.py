"""A blocking WebSocket client (RFC 6455, client side, no extensions) on the
standard library's socket.

For a short-lived command that sends a few messages and reads a stream (``troupe
run`` through a running server): an event loop and a WebSocket library cost such a
command most of its life in imports (trio and trio-websocket together take several
times the interpreter's own start), while the protocol a client needs is small:
the upgrade, masked frames out, frames in (fragmented or not), ping, close.

Waiting is ``select`` on the socket and, optionally, a wake-up descriptor (the
one ``signal.set_wakeup_fd`` writes to): a signal handler that only records the
signal then ends a wait without interrupting a read halfway through a frame.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import os
import select
import socket
import struct
import time
from typing import cast
from urllib.parse import urlsplit

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
MAX_HEADER_BYTES = 64 * 1024


class Rejected(Exception):
    """The server answered the upgrade with an HTTP status other than 101."""

    def __init__(self, status_code: int, body: bytes) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.body = body


class Closed(Exception):
    """The connection ended: a close frame (``code``, ``reason``), or the socket."""

    def __init__(self, code: int | None = None, reason: str = "") -> None:
        super().__init__(f"{code} {reason}".strip() if code else "connection lost")
        self.code = code
        self.reason = reason


class ProtocolViolation(Closed):
    """The server sent what RFC 6455 does not allow (or a message above the limit)."""


class Woken(Exception):
    """The wake-up descriptor became readable while waiting (a signal arrived)."""


class BlockingWebSocket:
    """One connection; :func:`open_websocket` makes it."""

    def __init__(
        self, sock: socket.socket, max_message: int, wake: int | None, received: bytes = b""
    ) -> None:
        self.sock = sock
        self.max_message = max_message
        self.wake = wake
        self._buffer = bytearray(received)
        """Bytes read but not yet a whole frame (the upgrade's read may hold some)."""
        self.closed = False

    def send(self, message: str | bytes) -> None:
        if isinstance(message, str):
            self._send_frame(OP_TEXT, message.encode())
        else:
            self._send_frame(OP_BINARY, message)

    def receive(self, timeout: float | None = None) -> str | bytes:
        """The next whole message; ``TimeoutError`` after ``timeout`` seconds,
        :class:`Woken` when the wake-up descriptor is readable, :class:`Closed`
        at the end."""
        deadline = None if timeout is None else time.monotonic() + timeout
        parts: list[bytes] = []
        kind = None
        size = 0
        while True:
            fin, opcode, payload = self._frame(deadline)
            if opcode >= OP_CLOSE:
                self._control(opcode, payload)
                continue
            if opcode == OP_CONTINUATION:
                if kind is None:
                    raise self._violation("a continuation frame with no message to continue")
            elif kind is not None:
                raise self._violation("a new message inside a fragmented one")
            else:
                kind = opcode
            size += len(payload)
            if size > self.max_message:
                raise self._violation(f"a message above {self.max_message} bytes", 1009)
            parts.append(payload)
            if fin:
                data = b"".join(parts)
                if kind == OP_TEXT:
                    try:
                        return data.decode()
                    except UnicodeDecodeError:
                        raise self._violation("a text message that is not UTF-8", 1007) from None
                return data

    def close(self, code: int = 1000) -> None:
        """Say goodbye (best effort) and close the socket."""
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError):
                self._send_frame(OP_CLOSE, struct.pack("!H", code))
        self.sock.close()

    def _control(self, opcode: int, payload: bytes) -> None:
        if opcode == OP_PING:
            self._send_frame(OP_PONG, payload)
        elif opcode == OP_CLOSE:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            reason = payload[2:].decode(errors="replace")
            if not self.closed:  # answer the close, as the RFC asks
                self.closed = True
                with contextlib.suppress(OSError):
                    self._send_frame(OP_CLOSE, payload[:2])
            raise Closed(code, reason)
        elif opcode != OP_PONG:
            raise self._violation(f"an unknown control opcode {opcode}")

    def _violation(self, what: str, code: int = 1002) -> ProtocolViolation:
        self.close(code)
        return ProtocolViolation(code, what)

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + _masked(payload, mask))

    def _frame(self, deadline: float | None) -> tuple[bool, int, bytes]:
        """One frame from the buffer (reading more as needed); the buffer gives it
        up only once it is whole, so a wait that ends early loses nothing."""
        while True:
            parsed = self._parse()
            if parsed is not None:
                return parsed
            self._fill(deadline)

    def _parse(self) -> tuple[bool, int, bytes] | None:
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        first, second = buffer[0], buffer[1]
        if first & 0x70:
            raise self._violation("reserved bits set (no extension was agreed)")
        if second & 0x80:
            raise self._violation("a masked frame from the server")
        size, start = second & 0x7F, 2
        if size == 126:
            if len(buffer) < 4:
                return None
            size, start = struct.unpack_from("!H", buffer, 2)[0], 4
        elif size == 127:
            if len(buffer) < 10:
                return None
            size, start = struct.unpack_from("!Q", buffer, 2)[0], 10
        opcode = first & 0x0F
        if opcode >= OP_CLOSE and (size > 125 or not first & 0x80):
            raise self._violation("a control frame that is long or fragmented")
        if size > self.max_message:
            raise self._violation(f"a frame above {self.max_message} bytes", 1009)
        end = start + size
        if len(buffer) < end:
            return None
        payload = bytes(buffer[start:end])
        del buffer[:end]
        return bool(first & 0x80), opcode, payload

    def _fill(self, deadline: float | None) -> None:
        pending = getattr(self.sock, "pending", None)  # TLS may hold decrypted bytes
        if not (pending and pending()):
            self._wait(deadline)
        try:
            chunk = self.sock.recv(256 * 1024)
        except OSError as error:
            raise Closed(None, str(error)) from error
        if not chunk:
            raise Closed()
        self._buffer += chunk

    def _wait(self, deadline: float | None) -> None:
        watched = [self.sock] if self.wake is None else [self.sock, self.wake]
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        readable, _, _ = select.select(watched, [], [], remaining)
        if not readable:
            raise TimeoutError
        if self.sock not in readable:
            raise Woken


def _masked(payload: bytes, mask: bytes) -> bytes:
    """``payload`` XOR the repeated 4-byte ``mask``, as one big-integer operation
    (a per-byte loop in Python is slow for a large input)."""
    if not payload:
        return b""
    size = len(payload)
    repeated = (mask * (size // 4 + 1))[:size]
    value = int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")
    return value.to_bytes(size, "big")


def open_websocket(
    url: str,
    headers: list[tuple[str, str]] | None = None,
    *,
    max_message: int = 16 * 1024 * 1024,
    timeout: float = 30.0,
    wake: int | None = None,
) -> BlockingWebSocket:
    """Connect to ``ws://`` or ``wss://`` ``url`` and upgrade. ``OSError`` when
    nothing answers, :class:`Rejected` with the status when the server refuses."""
    parts = urlsplit(url)
    secure = parts.scheme == "wss"
    host = parts.hostname or "localhost"
    port = parts.port or (443 if secure else 80)
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if secure:
            import ssl  # only for wss: the context loads the system's CAs

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        key = base64.b64encode(os.urandom(16)).decode()
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        netloc = host if parts.port is None else f"{host}:{port}"
        lines = [f"GET {target} HTTP/1.1", f"Host: {netloc}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13",
                 *(f"{name}: {value}" for name, value in headers or ())]  # fmt: skip
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head, rest = _read_head(sock)
        status, fields = _parse_head(head)
        if status != 101:
            raise Rejected(status, _read_body(sock, rest, fields))
        accept = base64.b64encode(_sha1(key.encode() + GUID)).decode()
        if fields.get("sec-websocket-accept") != accept:
            raise Rejected(status, b"the server's Sec-WebSocket-Accept does not match the key")
        sock.settimeout(None)  # waits go through select from here
    except BaseException:
        sock.close()
        raise
    return BlockingWebSocket(sock, max_message, wake, rest)


def _sha1(data: bytes) -> bytes:
    """SHA-1, for the upgrade's accept check: CPython's own when it has it, as
    hashlib's import loads OpenSSL's libcrypto (about 3 ms of a command's start)."""
    try:
        module = importlib.import_module("_sha1")
    except ImportError:  # an interpreter built without it
        module = importlib.import_module("hashlib")
    return cast(bytes, module.sha1(data).digest())


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEADER_BYTES:
            raise Rejected(0, b"the server's response headers are too long")
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionResetError("the server closed the connection during the upgrade")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    status_line, *lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(status_line.split()[1])
    except (IndexError, ValueError):
        raise Rejected(0, head[:200]) from None
    fields: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return status, fields


def _read_body(sock: socket.socket, rest: bytes, fields: dict[str, str]) -> bytes:
    """A refusal's body (a line saying why), as far as it says its length."""
    try:
        length = min(int(fields.get("content-length", "0")), MAX_HEADER_BYTES)
    except ValueError:
        length = 0
    body = rest
    try:
        while len(body) < length:
            chunk = sock.recv(length - len(body))
            if not chunk:
                break
            body += chunk
    except OSError:
        pass
    return body[:length]
