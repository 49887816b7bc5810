"""The ``troupe`` subcommands beyond ``mock-llm``: serve, run, attach, sessions,
demo and schema. :mod:`actors.cli` declares their arguments and hands over here.

Importing this package tells Python that httpx's own command-line client
(``httpx._main``) is absent: httpx imports it whenever click, pygments and rich are
installed (they are, for other reasons), and with them rich's console and every
pygments lexer index: a large part of ``import httpx``, on every start of a
command that talks to a model. A command never runs httpx's CLI; httpx then
defines its stub ``main`` instead. Nothing else changes, and a program that
imported httpx before this package keeps its CLI.
"""

import sys

if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment]
