"""Reading the wrapper's marker lines out of a remote command's stderr.

The wrapper (:mod:`environments.shell.scripts`) reports the process group, its
leader's start time and the exit status as ``__TROUPE_<nonce>_<KIND>__ <value>``
lines; the per-call nonce keeps a command from forging them. Pure code, used on the asyncio side.
"""

from __future__ import annotations

import re

from environments.shell.scripts import Markers


class MarkerFilter:
    """Removes marker lines from stderr chunks and records what they said."""

    def __init__(self, markers: Markers) -> None:
        self._start = markers.prefix
        self._pattern = re.compile(re.escape(markers.prefix) + rb"([A-Z]+)__ ?(-?\d*)\n")
        self._pending = b""
        self.pgid: int | None = None
        self.start_time: int | None = None
        self.started = False
        """Both the group id and the start time (maybe unknown) have been reported."""
        self.exit_status: int | None = None
        self.no_cwd = False

    @property
    def exited(self) -> bool:
        return self.exit_status is not None or self.no_cwd

    def feed(self, chunk: bytes) -> bytes:
        """The chunk's output with markers removed (a partial marker is held back)."""
        data = self._pattern.sub(self._record, self._pending + chunk)
        self._pending = b""
        held = data.find(self._start)
        if held < 0:
            for size in range(min(len(self._start) - 1, len(data)), 0, -1):
                if data.endswith(self._start[:size]):
                    held = len(data) - size
                    break
        if held >= 0:
            self._pending, data = data[held:], data[:held]
        return data

    def flush(self) -> bytes:
        rest, self._pending = self._pending, b""
        return rest

    def _record(self, match: re.Match[bytes]) -> bytes:
        kind, value = match.group(1), match.group(2)
        if kind == b"PGID" and value:
            self.pgid = int(value)
        elif kind == b"START":
            self.start_time = int(value) if value else None
            self.started = self.pgid is not None
        elif kind == b"EXIT" and value:
            self.exit_status = int(value)
        elif kind == b"NOCWD":
            self.no_cwd = True
        return b""
