"""Image, audio and document parts in each wire's shape, shared by the adapters.

Where a wire cannot carry a part (Anthropic takes no audio, Chat Completions takes
audio only as inline data), the adapter refuses the request with
:class:`InvalidRequestError` naming the wire and the part, so nothing the user
sent is dropped without a word (unified-llm-spec §3.5: "handled, or gracefully
rejected")."""

from __future__ import annotations

import base64

from actors.models.errors import InvalidRequestError
from protocol.llm import AudioPart, DocumentPart, ImagePart

AUDIO_FORMATS = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
    "audio/mpeg": "mp3", "audio/mp3": "mp3",
}  # fmt: skip
"""The formats OpenAI's ``input_audio`` takes, by media type."""

DEFAULT_DOCUMENT_TYPE = "application/pdf"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{b64(data)}"


def image_url(part: ImagePart) -> str:
    """The URL the OpenAI wires take for an image: its own, or its bytes inline."""
    if part.data is None:
        return part.url or ""
    return data_url(part.media_type or "image/png", part.data)


def refuse(wire: str, what: str) -> InvalidRequestError:
    return InvalidRequestError(f"the {wire} wire cannot send {what}")


def openai_input_audio(part: AudioPart, wire: str) -> dict[str, object]:
    """``input_audio`` (Chat Completions and Responses alike): inline wav or mp3 only."""
    if part.data is None:
        raise refuse(wire, "audio by URL (give the bytes)")
    media = part.media_type or "audio/wav"
    audio_format = AUDIO_FORMATS.get(media)
    if audio_format is None:
        raise refuse(wire, f"{media} audio (wav or mp3 only)")
    return {"type": "input_audio", "input_audio": {"data": b64(part.data), "format": audio_format}}


def document_name(part: DocumentPart) -> str:
    return part.file_name or "document.pdf"


def document_media(part: DocumentPart) -> str:
    return part.media_type or DEFAULT_DOCUMENT_TYPE
