"""Troupe's vocabulary: msgspec Structs for every message, event, turn and result.

This package is the bottom layer: it imports nothing from ``actors`` or
``environments``, so any client (in-process or over the wire) can depend on it alone.
"""
