"""The WebSocket protocol: version, close codes, codecs and the JSON Schema.

Frames are JSON text by default; a client that says ``encoding: msgpack`` in its
hello gets binary msgpack frames from then on, both ways. The frame Structs live
in :mod:`protocol.wire_requests` (client to server) and
:mod:`protocol.wire_replies` (server to client); ``docs/protocol.md`` describes
them with examples.
"""

from __future__ import annotations

import json
from typing import Any, cast

import msgspec

from protocol.events import EVENT_TYPES
from protocol.wire_client_calls import (
    ClientCall,
    ClientCallCancel,
    ClientCallError,
    ClientCallResult,
)
from protocol.wire_limits import (
    INT_MAX,
    INT_MIN,
    MAX_NESTING,
    json_depth_exceeds,
    may_hold_big_integers,
    msgpack_depth_exceeds,
    out_of_range_integers,
)
from protocol.wire_replies import (
    Compacted,
    ConfigUpdated,
    EnvironmentAdded,
    EnvironmentList,
    EnvironmentSummary,
    ErrorReply,
    Event,
    ExecReply,
    FileReply,
    Forked,
    ModelChoice,
    Ok,
    Reply,
    Rewound,
    ServerFrame,
    ServerOptions,
    SessionCreated,
    SessionDetail,
    SessionInfo,
    SessionList,
    Subscribed,
    Welcome,
    WriteReply,
)
from protocol.wire_requests import (
    AbortSession,
    AddDockerEnvironment,
    AddEnvironment,
    AddEnvironmentAlias,
    AddSSHEnvironment,
    ClientFrame,
    CompactSession,
    CreateSession,
    Encoding,
    ExecInEnvironment,
    ExtendSessionLimit,
    FollowUpSession,
    ForkSession,
    GetServerOptions,
    GetSession,
    Hello,
    InterruptSession,
    ListEnvironments,
    ListSessions,
    ReadEnvironmentFile,
    RemoveEnvironment,
    Request,
    RequestId,
    ResolveApproval,
    RewindSession,
    SteerSession,
    SubmitInput,
    SubscribeSession,
    UnsubscribeSession,
    UpdateSessionConfig,
    WriteEnvironmentFile,
)

PROTOCOL_VERSION = 1
DEFAULT_MAX_FRAME = 4 * 1024 * 1024

# WebSocket close codes the server uses (4000-4999 are the application's).
CLOSE_NORMAL = 1000
CLOSE_TOO_BIG = 1009
"""The frame exceeded ``max_frame_bytes`` (sent by the WebSocket layer)."""
CLOSE_UNAUTHORIZED = 4001
CLOSE_EXPECTED_HELLO = 4002
CLOSE_VERSION_MISMATCH = 4003
CLOSE_TOO_SLOW = 4008
"""The client did not drain its outbound queue; resubscribe with ``after_seq``."""
CLOSE_SHUTTING_DOWN = 4009


class FrameError(Exception):
    """A frame that could not be read; ``code`` and ``request_id`` go into the error."""

    def __init__(self, code: str, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


def _as_text(value: Any) -> str:
    """Event data is meant to be plain JSON; anything else is sent as its text
    rather than failing the frame."""
    return repr(value)


class Codec:
    """Encodes server frames and decodes client frames in one encoding."""

    def __init__(self, encoding: Encoding) -> None:
        self.encoding = encoding
        if encoding == "json":
            self._encoder: Any = msgspec.json.Encoder(enc_hook=_as_text)
            self._decoder: Any = msgspec.json.Decoder(ClientFrame)
            self._loose: Any = msgspec.json.Decoder()
        else:
            self._encoder = msgspec.msgpack.Encoder(enc_hook=_as_text)
            self._decoder = msgspec.msgpack.Decoder(ClientFrame)
            self._loose = msgspec.msgpack.Decoder()

    @property
    def binary(self) -> bool:
        return self.encoding == "msgpack"

    def encode(self, frame: Any) -> str | bytes:
        data = self._encoder.encode(frame)
        return data if self.binary else data.decode()

    def decode(self, message: str | bytes) -> ClientFrame:
        """The frame, or :class:`FrameError` saying precisely what is wrong.

        Nothing escapes but FrameError: too deep, not UTF-8, a lone surrogate, an
        integer beyond 64 bits are each named, with the request id when readable.
        """
        if isinstance(message, str) == self.binary:
            kind = "text" if isinstance(message, str) else "binary"
            want = "binary msgpack" if self.binary else "text JSON"
            raise FrameError("bad_frame", f"got a {kind} frame; this connection uses {want}")
        data = message.encode(errors="surrogatepass") if isinstance(message, str) else message
        too_deep = msgpack_depth_exceeds if self.binary else json_depth_exceeds
        if too_deep(data):
            raise FrameError("bad_frame", f"the frame nests deeper than {MAX_NESTING} levels")
        try:
            frame = self._decoder.decode(data)
        except msgspec.ValidationError as error:
            raise self._invalid(data, error) from None
        except msgspec.DecodeError as error:
            raise self._undecodable(data, error) from None
        except UnicodeDecodeError as error:
            text = f"a string is not valid UTF-8 (byte {error.start})"
            raise FrameError("bad_frame", text) from None
        except RecursionError:
            raise FrameError("bad_frame", "the frame nests too deep") from None
        if not may_hold_big_integers(data, self.binary):
            return frame
        for path, value in out_of_range_integers(frame):
            request_id = None if path == "$.id" else getattr(frame, "id", None)
            text = f"{path} = {value} is out of range (a signed 64-bit integer is required)"
            raise FrameError("invalid_request", text, request_id)
        return frame

    def _undecodable(self, data: bytes, error: msgspec.DecodeError) -> FrameError:
        """Not valid JSON/msgpack. JSON that Python's own parser reads (a lone
        surrogate such as ``"\\ud800"``, which msgspec refuses) keeps its id."""
        if not self.binary:
            try:
                loose = json.loads(data.decode("utf-8", errors="surrogatepass"))
            except (ValueError, RecursionError):
                loose = None
            if isinstance(loose, dict):
                text = f"a string holds a lone surrogate, which is not Unicode text ({error})"
                return FrameError(
                    "invalid_request", text, _readable_id(cast("dict[Any, Any]", loose))
                )
        return FrameError("bad_frame", f"not valid {self.encoding}: {error}")

    def _invalid(self, data: bytes, error: msgspec.ValidationError) -> FrameError:
        """Tell an unknown tag from wrong fields, and keep the id when there is one."""
        try:
            loose = self._loose.decode(data)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            loose = None
        request_id = (
            _readable_id(cast("dict[Any, Any]", loose)) if isinstance(loose, dict) else None
        )
        text = str(error)
        code = "unknown_type" if "Invalid value" in text and "$.type" in text else "invalid_request"
        if isinstance(loose, dict) and "type" not in loose:
            code = "invalid_request"
        return FrameError(code, text, request_id)


def _readable_id(frame: dict[Any, Any]) -> RequestId | None:
    """The frame's id if it is one a reply can carry (a string, or a 64-bit integer)."""
    candidate = frame.get("id")
    if isinstance(candidate, bool):
        return None
    if isinstance(candidate, int):
        return candidate if INT_MIN <= candidate <= INT_MAX else None
    if isinstance(candidate, str):
        try:
            candidate.encode()
        except UnicodeEncodeError:  # a lone surrogate cannot be sent back
            return None
        return candidate
    return None


class ServerDecoder:
    """Decodes server frames, for clients written in Python."""

    def __init__(self, encoding: Encoding) -> None:
        if encoding == "json":
            self._decoder: Any = msgspec.json.Decoder(ServerFrame)
        else:
            self._decoder = msgspec.msgpack.Decoder(ServerFrame)

    def decode(self, message: str | bytes) -> ServerFrame:
        return self._decoder.decode(message.encode() if isinstance(message, str) else message)


def encode_client(frame: ClientFrame, encoding: Encoding) -> str | bytes:
    if encoding == "json":
        return msgspec.json.encode(frame).decode()
    return msgspec.msgpack.encode(frame)


def protocol_schema() -> dict[str, Any]:
    """One JSON Schema document for the whole protocol (``troupe schema``).

    An ``event`` frame's ``data`` is described per kind: the frame is one of the
    kinds of :mod:`protocol.events`, each with ``kind`` fixed and ``data`` its
    Struct's schema."""
    bodies = list(EVENT_TYPES.values())
    (client, server, *body_schemas), components = msgspec.json.schema_components(
        [ClientFrame, ServerFrame, *bodies], ref_template="#/$defs/{name}"
    )
    event = components["Event"]
    event["properties"]["kind"] = {"enum": list(EVENT_TYPES)}
    event["oneOf"] = [
        {
            "properties": {"kind": {"const": kind}, "data": body_schema},
            "required": ["kind", "data"] if body.__struct_fields__ else ["kind"],
        }
        for (kind, body), body_schema in zip(EVENT_TYPES.items(), body_schemas, strict=True)
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Troupe WebSocket protocol",
        "protocol_version": PROTOCOL_VERSION,
        "properties": {"client_frame": client, "server_frame": server},
        "$defs": components,
    }


__all__ = [
    "CLOSE_EXPECTED_HELLO",
    "CLOSE_NORMAL",
    "CLOSE_SHUTTING_DOWN",
    "CLOSE_TOO_BIG",
    "CLOSE_TOO_SLOW",
    "CLOSE_UNAUTHORIZED",
    "CLOSE_VERSION_MISMATCH",
    "DEFAULT_MAX_FRAME",
    "MAX_NESTING",
    "PROTOCOL_VERSION",
    "AbortSession",
    "AddDockerEnvironment",
    "AddEnvironment",
    "AddEnvironmentAlias",
    "AddSSHEnvironment",
    "ClientCall",
    "ClientCallCancel",
    "ClientCallError",
    "ClientCallResult",
    "ClientFrame",
    "Codec",
    "CompactSession",
    "Compacted",
    "ConfigUpdated",
    "CreateSession",
    "Encoding",
    "EnvironmentAdded",
    "EnvironmentList",
    "EnvironmentSummary",
    "ErrorReply",
    "Event",
    "ExecInEnvironment",
    "ExecReply",
    "ExtendSessionLimit",
    "FileReply",
    "FollowUpSession",
    "ForkSession",
    "Forked",
    "FrameError",
    "GetServerOptions",
    "GetSession",
    "Hello",
    "InterruptSession",
    "ListEnvironments",
    "ListSessions",
    "ModelChoice",
    "Ok",
    "ReadEnvironmentFile",
    "RemoveEnvironment",
    "Reply",
    "Request",
    "RequestId",
    "ResolveApproval",
    "RewindSession",
    "Rewound",
    "ServerDecoder",
    "ServerFrame",
    "ServerOptions",
    "SessionCreated",
    "SessionDetail",
    "SessionInfo",
    "SessionList",
    "SteerSession",
    "SubmitInput",
    "SubscribeSession",
    "Subscribed",
    "UnsubscribeSession",
    "UpdateSessionConfig",
    "Welcome",
    "WriteEnvironmentFile",
    "WriteReply",
    "encode_client",
    "protocol_schema",
]
