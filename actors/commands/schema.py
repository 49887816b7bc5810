"""``troupe schema``: the JSON Schema of the whole WebSocket protocol."""

from __future__ import annotations

import argparse
import json

from protocol.wire import protocol_schema


def run(args: argparse.Namespace) -> int:
    print(json.dumps(protocol_schema(), indent=2))
    return 0
