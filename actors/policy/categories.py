"""Tool categories (agent-loop-and-tool-system.md 6.1): how much a call can change.

``read`` looks, ``write`` changes the workspace, ``admin`` can hurt beyond it
(deletes trees, escalates privilege, reaches the network, touches the system).
"""

from __future__ import annotations

from typing import Literal

Category = Literal["read", "write", "admin"]

_RANK: dict[Category, int] = {"read": 0, "write": 1, "admin": 2}


def worst(first: Category, second: Category) -> Category:
    """The more dangerous of two categories."""
    return first if _RANK[first] >= _RANK[second] else second
