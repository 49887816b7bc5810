"""Local file paths in a request become inline data (unified-llm-spec §3.5).

An image, audio or document part whose ``url`` looks like a file path (``/``,
``./``, ``../``, ``~``) is read (without blocking the event loop), its media type
taken from the extension, and sent the way each provider takes inline data.
Other URLs are left alone. A file that cannot be read is a typed error naming it,
raised before anything is sent.
"""

from __future__ import annotations

import mimetypes

import msgspec
import trio

from actors.models.errors import InvalidRequestError
from protocol.llm import AudioPart, DocumentPart, ImagePart, Message, Request

LOCAL_PREFIXES = ("/", "./", "../", "~")
MAX_FILE_BYTES = 20 * 1024 * 1024
FileParts = ImagePart | AudioPart | DocumentPart
DEFAULT_MEDIA = {ImagePart: "image/png", AudioPart: "audio/wav", DocumentPart: "application/pdf"}
WHAT = {ImagePart: "image", AudioPart: "audio", DocumentPart: "document"}


def _is_local(part: object) -> bool:
    return (
        type(part) in DEFAULT_MEDIA
        and part.data is None  # type: ignore[attr-defined]
        and (part.url or "").startswith(LOCAL_PREFIXES)  # type: ignore[attr-defined]
    )


async def _inline(part: FileParts) -> FileParts:
    path = await trio.Path(part.url or "").expanduser()
    what = WHAT[type(part)]
    try:
        size = (await path.stat()).st_size
        if size > MAX_FILE_BYTES:
            raise InvalidRequestError(f"{what} {path}: {size} bytes, more than {MAX_FILE_BYTES}")
        data = await path.read_bytes()
    except OSError as error:
        raise InvalidRequestError(f"{what} {path}: {error.strerror or error}") from None
    media = part.media_type or mimetypes.guess_type(path.name)[0] or DEFAULT_MEDIA[type(part)]
    inlined = msgspec.structs.replace(part, url=None, data=data, media_type=media)
    if type(inlined) is DocumentPart and inlined.file_name is None:
        inlined = msgspec.structs.replace(inlined, file_name=path.name)
    return inlined


async def inline_local_files(request: Request) -> Request:
    """The request with local files read in; the same object when there are none."""
    if not any(_is_local(p) for m in request.messages for p in m.content):
        return request
    messages = []
    for message in request.messages:
        if any(_is_local(p) for p in message.content):
            parts = [await _inline(p) if _is_local(p) else p for p in message.content]  # type: ignore[arg-type]
            message = Message(message.role, parts, message.name, message.tool_call_id)
        messages.append(message)
    return msgspec.structs.replace(request, messages=messages)
