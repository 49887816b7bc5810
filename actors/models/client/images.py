"""Local image paths in a request become inline data (unified-llm-spec §3.5).

An ``ImagePart`` whose ``url`` looks like a file path (``/``, ``./``, ``../``, ``~``)
is read (without blocking the event loop), its media type taken from the extension,
and sent the way each provider takes inline images. Other URLs are left alone.
"""

from __future__ import annotations

import mimetypes

import msgspec
import trio

from actors.models.errors import InvalidRequestError
from protocol.llm import ImagePart, Message, Request

LOCAL_PREFIXES = ("/", "./", "../", "~")
MAX_IMAGE_BYTES = 20 * 1024 * 1024


def _is_local(part: object) -> bool:
    return (
        type(part) is ImagePart
        and part.data is None
        and (part.url or "").startswith(LOCAL_PREFIXES)
    )


async def _inline(part: ImagePart) -> ImagePart:
    path = await trio.Path(part.url or "").expanduser()
    try:
        size = (await path.stat()).st_size
        if size > MAX_IMAGE_BYTES:
            raise InvalidRequestError(f"image {path}: {size} bytes, more than {MAX_IMAGE_BYTES}")
        data = await path.read_bytes()
    except OSError as error:
        raise InvalidRequestError(f"image {path}: {error.strerror or error}") from None
    media = part.media_type or mimetypes.guess_type(path.name)[0] or "image/png"
    return ImagePart(None, data, media, part.detail)


async def inline_local_images(request: Request) -> Request:
    """The request with local image files read in; the same object when there are none."""
    if not any(_is_local(p) for m in request.messages for p in m.content):
        return request
    messages = []
    for message in request.messages:
        if any(_is_local(p) for p in message.content):
            parts = [await _inline(p) if _is_local(p) else p for p in message.content]  # type: ignore[arg-type]
            message = Message(message.role, parts, message.name, message.tool_call_id)
        messages.append(message)
    return msgspec.structs.replace(request, messages=messages)
