"""``troupe acp``: serve the Agent Client Protocol on stdin/stdout for an editor.

The editor's ``initialize`` is answered first, before the runtime is imported
(:mod:`actors.acp.handshake`); the runtime, the server and everything after the
first line are :mod:`actors.commands.acp_serve`'s. So this module imports nothing
beyond the standard library until then."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    try:
        from actors.acp.handshake import answer_initialize

        handshake = answer_initialize(stdin=0, stdout=1)
        from actors.commands.acp_serve import serve_editor

        return serve_editor(args, handshake)
    except KeyboardInterrupt:
        return 130
