"""``troupe login-link``: a fresh one-time login link for the web page of the
running ``troupe serve``, without restarting it.

Login tokens live only in the server's memory, so the running server mints the
link: this command asks it with ``POST /login-link`` on its own port, carrying the
server's token (read from the data directory, ``--token`` or ``$TROUPE_TOKEN``) as a
bearer, which only the user who runs the server can read. Each link logs in one
browser, once; links issued earlier stay valid until used.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from actors.commands.common import data_dir, read_token, server_url
from actors.commands.errors import EXIT_BAD_INPUT, EXIT_ERROR, CommandError

TIMEOUT = 10.0
"""Seconds to wait for the server: it answers at once, unless it is not there."""


class Minted(msgspec.Struct, frozen=True):
    url: str


def run(args: argparse.Namespace) -> int:
    url = server_url(args)
    if url is None:
        raise CommandError(
            f"no troupe serve is running for {data_dir(args)}; start one with "
            "`troupe serve` (it prints a link), or pass --connect URL",
            EXIT_ERROR,
        )
    link = mint(url, read_token(args))
    if args.open and webbrowser.open(link):
        print(f"opened the web page in a browser ({link.split('?', 1)[0]})")
        return 0
    if args.open:
        print("troupe login-link: no browser found; open this link", file=sys.stderr)
    print(link)
    return 0


def endpoint(server: str) -> str:
    """``ws://host:port/`` -> ``http://host:port/login-link`` (wss -> https)."""
    parts = urlsplit(server)
    scheme = "https" if parts.scheme == "wss" else "http"
    return urlunsplit((scheme, parts.netloc, "/login-link", "", ""))


def mint(server: str, token: str | None) -> str:
    """Ask the server at ``server`` (its WebSocket URL) for a one-time login link."""
    target = endpoint(server)
    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        # trust_env off: a proxy from the environment must not see the token, and
        # the server is the one troupe serve runs, reached directly.
        with httpx.Client(timeout=TIMEOUT, trust_env=False) as client:
            response = client.post(target, headers=headers)
    except httpx.ConnectError as error:
        raise CommandError(
            f"cannot reach the server at {server}: nothing is listening "
            "(is `troupe serve` running?)",
            EXIT_ERROR,
        ) from error
    except httpx.HTTPError as error:
        raise CommandError(f"cannot reach the server at {server}: {error}", EXIT_ERROR) from error
    if response.status_code == 401:
        raise CommandError(
            f"the server at {server} refused the token; pass --token or set "
            "TROUPE_TOKEN (the server keeps it in <data-dir>/token)",
            EXIT_BAD_INPUT,
        )
    if response.status_code != 200:
        raise CommandError(
            f"the server at {server} cannot issue login links (HTTP "
            f"{response.status_code}; is it a troupe serve of this version?)",
            EXIT_ERROR,
        )
    try:
        return msgspec.json.decode(response.content, type=Minted).url
    except msgspec.DecodeError as error:
        raise CommandError(
            f"the server at {server} sent an unreadable answer: {error}", EXIT_ERROR
        ) from error
