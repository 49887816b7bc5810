"""A server's token, as ``troupe serve`` writes it, can be given to ``--token`` as
is: tokens are URL-safe base64, and one in 64 would start with ``-``, which argparse
reads as the next option (``expected one argument``)."""

from __future__ import annotations

from pathlib import Path

from actors.access.auth import load_or_create_token
from actors.cli import build_parser

TOKENS = 500
"""Enough that tokens starting with ``-`` would show up: (63/64)**500 < 0.001."""


def test_every_fresh_token_parses_as_the_value_of_token(tmp_path: Path) -> None:
    parser = build_parser()
    for index in range(TOKENS):
        token = load_or_create_token(tmp_path / str(index))
        parsed = parser.parse_args(["run", "--connect", "ws://127.0.0.1:1/", "--token", token, "x"])
        assert parsed.token == token


def test_a_stored_token_is_kept_as_it_is(tmp_path: Path) -> None:
    """A token file written before tokens avoided a leading ``-`` still works: the
    server reads it back unchanged (``--token=VALUE`` passes it on the command line)."""
    (tmp_path / "token").write_text("-old-token\n")
    assert load_or_create_token(tmp_path) == "-old-token"
    parsed = build_parser().parse_args(["run", "--token=-old-token", "x"])
    assert parsed.token == "-old-token"
