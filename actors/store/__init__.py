"""The durable store (SQLite in WAL mode): sessions, their events and history."""

from actors.store.db import EventRow, SessionRow
from actors.store.store import Store, default_data_dir, open_store

__all__ = ["EventRow", "SessionRow", "Store", "default_data_dir", "open_store"]
