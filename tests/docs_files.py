"""The files a doc page shows: each fenced block right after a
``<!-- file: PATH -->`` line, so a test can write them as they stand and run them."""

from __future__ import annotations

import re
from pathlib import Path

_FILE_BLOCK = re.compile(r"^<!-- file: (\S+) -->\n```\w*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def files_of(page: Path) -> dict[str, str]:
    return dict(_FILE_BLOCK.findall(page.read_text()))


def plant(page: Path, root: Path) -> list[str]:
    """Write the page's files under ``root``; their paths."""
    written = []
    for relative, text in files_of(page).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(relative)
    return written
