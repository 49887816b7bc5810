"""The ``troupe`` console script's entry point: a Ctrl-C that lands while the
command's own modules load is one line and exit 130, as it is later.

The script an installer writes runs ``from actors.console import main``, a line of
its own (``sys.argv[0] = re.sub(...)``), then ``main()``. Importing this module
blocks SIGINT, so a Ctrl-C in that gap stays pending in the kernel rather than
raising in the script; :func:`main` unblocks it inside its ``try``, where the
pending signal, or one during the imports that follow (the first half second of
every command), is a ``KeyboardInterrupt`` caught here, not a traceback. Only the
console script imports this module. Before it runs there is only Python's own
start (its ``site`` import) and the ``actors`` package, which imports nothing
until a name is used. :mod:`actors.cli` keeps its own handlers for everything
after it has loaded; this one also covers the gaps between them (an interrupt
while its error report is being loaded).
"""

import gc
import signal
import sys

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
        if _MASKABLE:  # a Ctrl-C held since the import is delivered here, inside the try
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        gc.disable()
        from actors.cli import main as troupe

        return troupe(loaded=_collect_again if collecting else None)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if collecting:  # a failure before the command's module loaded
            gc.enable()


def _collect_again() -> None:
    gc.freeze()
    gc.enable()
