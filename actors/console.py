"""The ``troupe`` console script's entry point: a Ctrl-C that lands while the
command's own modules load is one line and exit 130, as it is later.

The script an installer writes runs ``from actors.console import main``, a line of
its own (``sys.argv[0] = re.sub(...)``), then ``main()``. Importing this module
blocks SIGINT, and it stays blocked while the command line is parsed and the
command's module imported (the first half second of every command): a Ctrl-C
then stays pending in the kernel. Once the command's module is loaded (the
``loaded`` callback of :func:`actors.cli.main`), SIGINT is unblocked, and a
pending one is a ``KeyboardInterrupt`` raised right there, which the CLI reports
as one line and exit 130.

Why not let it raise during the imports, inside a ``try``: CPython drops a
``KeyboardInterrupt`` raised in its import system's lock callback
(``_get_module_lock.<locals>.cb``, "Exception ignored"), and then nothing stopped
the command: a ``troupe serve`` interrupted while it loaded went on serving (3 in
100 Ctrl-Cs landing 10 to 60 ms into its start, in a stress run here).
Held until the imports are done, the signal is raised where nothing drops it.

Only the console script imports this module. Before it runs there is only
Python's own start (its ``site`` import) and the ``actors`` package, which imports
nothing until a name is used. A run that ends before its command loads (``--help``,
``--version``, a usage error) exits with the signal still blocked: a Ctrl-C then
changes nothing. :mod:`actors.cli` keeps its own handlers for everything after.
"""

import gc
import signal
import sys
from collections.abc import Callable

INTERRUPTED = "troupe: interrupted"
EXIT_INTERRUPTED = 130  # actors.commands.errors.EXIT_INTERRUPTED, not imported: that is the point
_MASKABLE = hasattr(signal, "pthread_sigmask")  # POSIX; elsewhere the gap stays open

if _MASKABLE:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

# HTTP/2's h2 is no dependency of Troupe, which never asks httpx for HTTP/2; where
# something else installed it (Hypercorn does), httpcore would import it with every
# first request all the same (a fifth of a run's own imports). Declared absent in
# this process, httpcore defines its stub, as in an install of Troupe alone.
sys.modules.setdefault("h2", None)  # type: ignore[assignment]


def main() -> int:
    """``actors.cli.main``, with a Ctrl-C anywhere around it one line and 130.

    Python's cyclic collector is off while the parser and the command's module load
    (as ``troupe run`` keeps it off until its session is open,
    :class:`actors.commands.headless.Startup`): the objects they make all live on,
    and the two dozen collections their allocation triggered found nothing to free.
    Once the command's module is loaded, what exists is frozen (kept out of later
    collections) and the collector is on again. A collector that was off stays off."""
    collecting = gc.isenabled()
    try:
        gc.disable()
        from actors.cli import main as troupe

        return troupe(loaded=_when_loaded(collecting))
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if collecting:  # a failure before the command's module loaded
            gc.enable()


def _when_loaded(collecting: bool) -> Callable[[], None]:
    """What happens once the command's module is loaded, before it runs: the
    collector on again (frozen first), then SIGINT unblocked, which raises a
    Ctrl-C held since the start (module doc)."""

    def loaded() -> None:
        if collecting:
            gc.freeze()
            gc.enable()
        if _MASKABLE:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    return loaded
