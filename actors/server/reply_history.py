"""A session's history as ``get_session`` sends it: without the bytes of the
images tool results carry.

An image may be megabytes (``max_image_bytes``, 5 MB by default) and a frame is
at most ``max_frame_bytes`` (4 MB by default): one picture would make the
session's detail too big to send. Clients show the result's text, which says what
the image was (``Image file a.png (image/png, 640x480, 51234 bytes).``); the
session itself rebuilds its requests from the store, where the bytes stay.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol.session import ToolResultsTurn, Turn


def without_image_bytes(history: Sequence[Turn]) -> list[Turn]:
    """``history`` with every tool result's ``images`` left out (others as they are)."""
    out: list[Turn] = []
    for turn in history:
        if isinstance(turn, ToolResultsTurn) and any(r.images for r in turn.results):
            results = [msgspec.structs.replace(r, images=[]) for r in turn.results]
            turn = msgspec.structs.replace(turn, results=results)
        out.append(turn)
    return out
