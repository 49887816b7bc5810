"""YAML front matter of a Markdown file (``---`` lines around it), as SKILL.md and
the anchors' command files use it."""

from __future__ import annotations

from typing import Any


class FrontMatterError(ValueError):
    """Front matter that is not a YAML mapping."""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter (empty when there is none) and the body after it."""
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            import yaml  # here: only a file with front matter needs it (it is slow to import)

            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            try:
                data = yaml.safe_load(raw) or {}
            except yaml.YAMLError as exc:
                raise FrontMatterError(f"front matter is not YAML: {exc}") from None
            if not isinstance(data, dict):
                raise FrontMatterError("front matter is not a mapping")
            return {str(key): value for key, value in data.items()}, body
    raise FrontMatterError("front matter has no closing ---")
