"""The one tool-round engine: ask the model, run the tools it called, ask again.

The client layer's ``generate()`` and ``stream()`` (unified-llm-spec §4.3-4.4) and
the session's agentic loop (coding-agent-loop-spec §2.5) all run their rounds here.
Each brings its own model call and its own way to run one call through a
:class:`RoundHost`, as pi-mono's loop takes callbacks; the engine keeps the shape
of a round (one model call, then the calls in parallel or in turn with results in
call order, then what the host does between rounds) and lets any
:class:`RoundObserver` watch every round, whichever user runs it.

It imports nothing of the model layer or the session, so both can import it.
"""

from actors.rounds.calls import run_calls, run_round
from actors.rounds.engine import STOP, Answer, Move, RoundHost, Stop, run_rounds
from actors.rounds.observers import RoundObserver, observe_rounds

__all__ = [
    "STOP",
    "Answer",
    "Move",
    "RoundHost",
    "RoundObserver",
    "Stop",
    "observe_rounds",
    "run_calls",
    "run_round",
    "run_rounds",
]
