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
from actors.server.tree_points import snapshot_at
from actors.session.rewind import fork_point
from actors.session.turns import conversation
from actors.store import Store
from actors.workspace import materialize_snapshot
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
        if not request.working_dir.startswith("/"):
            raise ForkRefused("a fork's working_dir must be an absolute path")
        if not local:
            raise ForkRefused("a fork's own working tree is made for local sessions only")
        source = await registry.environments.local(row.working_dir)
        point = await snapshot_at(store, row.id, request.at_seq, source, record.config)
        tree = await materialize_snapshot(
            source, point.commit, request.working_dir, root=point.root,
            shadow=point.shadow,
        )  # fmt: skip
        snapshot, working_dir = point.commit, tree.directory
    origin = ForkedFromEvent(
        source=row.id,
        at_seq=request.at_seq or 0,
        turns=len(turns),
        working_directory=working_dir if snapshot else None,
        snapshot=snapshot,
    )
    new = await registry.create(
        row.profile, environment, working_dir, record.config, history=turns, origin=origin
    )
    return Forked(request.id, new.info(), len(turns), working_dir if snapshot else None)
