"""``fork``: a new session that goes on from a point of another one's conversation.

The fork's history is the original's conversation (its rewinds applied) up to the
event named (:func:`actors.session.rewind.fork_point`), written to the store as
the new session's own turns; from then on both sessions go on independently.
With ``working_dir`` the fork gets its own copy of the working tree, from the
workspace snapshots; without, it works in the original's environment.
"""

from __future__ import annotations

from actors.kernel import Rejection
from actors.server.recovery import repair_history
from actors.server.registry import SessionRegistry
from actors.session.rewind import fork_point
from actors.session.turns import conversation
from actors.store import Store
from protocol.events import ForkedFromEvent
from protocol.wire import Forked, ForkSession


class ForkRefused(Rejection):
    code = "invalid_request"


async def fork_session(registry: SessionRegistry, store: Store, request: ForkSession) -> Forked:
    record = registry.record(request.session)
    await store.flush()  # the history as the session has it now
    history = conversation(await store.history(record.row.id))
    turns = history[: fork_point(history, request.at_seq)]
    turns += repair_history(turns)  # forked in the middle of a round: its calls get results
    row = record.row
    local = row.environment.startswith("/environments/local")
    working_dir, environment = (row.working_dir, None) if local else (None, row.environment)
    snapshot: str | None = None
    if request.working_dir is not None:
        raise ForkRefused("a fork's own working tree needs workspace snapshots")
    origin = ForkedFromEvent(
        source=row.id,
        at_seq=request.at_seq or 0,
        turns=len(turns),
        working_directory=request.working_dir,
        snapshot=snapshot,
    )
    new = await registry.create(
        row.profile, environment, working_dir, record.config, history=turns, origin=origin
    )
    return Forked(request.id, new.info(), len(turns), request.working_dir)
