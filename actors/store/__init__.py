"""The durable store: sessions, their events and history, in SQLite (WAL, the
default) or PostgreSQL, behind one interface (:mod:`actors.store.backend`).

The names are imported from their modules when first used, so that a command that
only needs the data directory (:func:`default_data_dir`) does not import the store.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from actors.store.paths import default_data_dir

if TYPE_CHECKING:
    from actors.store.rows import EnvironmentRow, EventRow, SessionRow
    from actors.store.store import Store, open_store

_MODULE_OF = {
    "EnvironmentRow": "rows", "EventRow": "rows", "SessionRow": "rows",
    "Store": "store", "open_store": "store",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = ["EnvironmentRow", "EventRow", "SessionRow", "Store", "default_data_dir", "open_store"]
