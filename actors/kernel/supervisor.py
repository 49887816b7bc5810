"""Supervision: how an actor runs, fails, and stops, children before parents.

Each actor runs as one task in its parent's children nursery (the runtime's root
nursery for top-level actors) and opens its own nursery for its children, so the
task tree is the actor tree. A failure is caught at the actor's boundary and sent
to the parent as a :class:`ChildFailed` message: it cancels neither the parent nor
the siblings. Stopping is a ladder: signal the subtree's process groups, stop the
children, close the mailbox, wait out the grace period, then cancel.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

import trio

from actors.kernel.errors import ActorFailedError, DeadActorError, Rejection
from actors.kernel.processes import terminate_groups
from actors.kernel.ref import Ask
from protocol.supervision import ChildFailed, ChildRestarted, ChildStopped

if TYPE_CHECKING:
    from actors.kernel.actor import HandlerFunction
    from actors.kernel.cell import Cell

log = logging.getLogger("troupe.actors")


async def _message_loop(cell: Cell) -> None:
    """Feed the actor one message at a time until its mailbox is closed and drained.

    Messages of concurrent handlers are started as tasks in the actor's nursery and
    the loop moves on; every other message is handled before the next is taken.
    """
    handlers = cell.handlers
    concurrent = cell.concurrent
    nursery = cell.nursery
    async for item in cell.mailbox:
        if not isinstance(item, Ask):
            kind: type[object] = item.__class__
            if kind in concurrent:
                nursery.start_soon(_run_concurrently, cell, handlers[kind], item)
            else:
                await _tell(cell, handlers[kind], item)
            continue
        kind = type(item.message)
        if kind in concurrent:
            nursery.start_soon(_run_concurrently, cell, handlers[kind], item)
        else:
            await _answer(cell, handlers[kind], item)


async def _tell(cell: Cell, function: HandlerFunction, message: Any) -> None:
    try:
        await function(cell.actor, message)
    except Rejection as rejection:
        log.warning("%s rejected %s: %s", cell.address, type(message).__name__, rejection)


async def _answer(cell: Cell, function: HandlerFunction, request: Ask) -> None:
    """Run the handler of an ask and settle the reply, whatever happens."""
    try:
        reply = await function(cell.actor, request.message)
    except Rejection as rejection:
        request.fail(rejection)
        return
    except Exception as exc:
        request.fail(ActorFailedError(cell.address, type(exc).__name__, str(exc)))
        raise
    except BaseException:
        request.fail(DeadActorError(cell.address))
        raise
    request.succeed(reply)


async def _run_concurrently(cell: Cell, function: HandlerFunction, item: Any) -> None:
    """One request of a concurrent handler, in its own cancel scope.

    The scope is the ask's, so an asker that gives up cancels exactly this work. A
    failure other than a Rejection is a failure of the actor.
    """
    with trio.CancelScope() as scope:
        try:
            if type(item) is not Ask:
                await _tell(cell, function, item)
                return
            if item.abandoned:
                return
            item.scope = scope
            await _answer(cell, function, item)
        except Exception as exc:
            cell.record_failure(exc)


async def run_cell(cell: Cell) -> None:
    """The whole life of one actor, as a task in its parent's nursery.

    Never raises (but for trio's own cancellation): a failure of the actor is
    reported to the parent as a message, and a failure of ``on_start`` is handed to
    the spawner through ``cell.start_error``. An actor with a restart policy that
    fails is started again in place (see :mod:`actors.kernel.restart`).
    """
    try:
        while True:
            await _live(cell)
            if not await _restarted(cell):
                break
    finally:
        cell.signal_ready()
        dropped = cell.release()
        if dropped:
            log.warning("%s stopped with %d undelivered messages", cell.address, dropped)
        cell.runtime.forget(cell)
        if cell.process_groups:
            with trio.CancelScope(shield=True):
                await terminate_groups(cell.process_groups, cell.runtime.kill_grace)
        cell.mark_finished()
    if cell.start_error is None:
        await _report_exit(cell, cell.failure)


async def _live(cell: Cell) -> None:
    """One incarnation: ``on_start``, then messages until stopped or failed."""
    actor = cell.actor
    first = cell.ready is not None
    try:
        async with trio.open_nursery() as nursery:
            cell.open_nursery(nursery)
            try:
                await actor.on_start()
            except Exception as exc:
                if first:
                    cell.start_error = exc
                else:
                    cell.failure = exc
                await stop_children(cell)
            else:
                cell.signal_ready()
                await _serve(cell)
    except Exception as exc:
        # A task the actor started in its own nursery raised.
        cell.failure = cell.failure or _unwrap(exc)


async def _restarted(cell: Cell) -> bool:
    """After a failure: tell the actor, then start it again if its policy allows."""
    failure = cell.failure
    if failure is None or cell.start_error is not None:
        return False
    with trio.CancelScope(shield=True) as scope:
        scope.deadline = trio.current_time() + cell.runtime.grace
        try:
            await cell.actor.on_failure(failure)
        except Exception as exc:
            log.warning("%s: on_failure raised %s: %s", cell.address, type(exc).__name__, exc)
    budget = cell.restart
    parent = cell.parent
    if (
        budget is None
        or cell.runtime.closing
        or (cell.stop_requested and not cell.restarting)
        or (parent is not None and parent.stop_requested)
        or not budget.allow()
    ):
        return False
    log.error(
        "actor %s failed (%s: %s); restarting it (restart %d)",
        cell.address, type(failure).__name__, failure, budget.count,
        exc_info=failure,
    )  # fmt: skip
    notice = ChildRestarted(cell.address, type(failure).__name__, str(failure), budget.count)
    cell.prepare_restart()
    cell.runtime.record_restart(notice)
    if parent is not None and type(notice) in parent.handlers:
        try:
            parent.inbox.send_nowait(notice)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            log.info("%s: parent did not hear of the restart", cell.address)
    return True


def _unwrap(exc: Exception) -> Exception:
    """A group of one is reported as its member, which is what a reader wants."""
    current = exc
    while isinstance(current, ExceptionGroup):
        members: tuple[Exception, ...] = cast("ExceptionGroup[Exception]", current).exceptions
        if len(members) != 1:
            break
        current = members[0]
    return cast(Exception, current)


async def _serve(cell: Cell) -> None:
    """Handle messages until stopped, then stop the children and run ``on_stop``."""
    try:
        await _message_loop(cell)
    except Exception as exc:
        cell.failure = cell.failure or exc
        cell.restarting = cell.restart is not None and not cell.stop_requested
    cell.stop_requested = True
    if cell.restarting:  # keep the mailbox: the next incarnation takes what is queued
        await stop_children(cell)
        return
    cell.close_inbox()
    await stop_children(cell)
    try:
        await cell.actor.on_stop()
    except Exception as exc:
        cell.failure = cell.failure or exc


async def _report_exit(cell: Cell, failure: Exception | None) -> None:
    """Tell the parent how the child ended; a closed parent mailbox is not an error."""
    if failure is not None:
        log.warning(
            "actor %s failed: %s: %s",
            cell.address,
            type(failure).__name__,
            failure,
            exc_info=failure,
        )
        notice: ChildFailed | ChildStopped = ChildFailed(
            cell.address, type(failure).__name__, str(failure)
        )
    else:
        notice = ChildStopped(cell.address)
    parent = cell.parent
    if parent is None:
        cell.runtime.record_root_exit(notice)
        return
    if type(notice) not in parent.handlers:
        return
    try:
        await parent.inbox.send(notice)
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        log.info("%s: parent stopped before hearing %r", cell.address, notice)


async def stop_children(cell: Cell, grace: float | None = None) -> None:
    """Stop every child of ``cell`` and its subtree, with their process groups."""
    children = list(cell.children.values())
    if children:
        await stop_subtrees(children, cell.runtime.grace if grace is None else grace)


async def stop_subtrees(cells: list[Cell], grace: float) -> None:
    """Stop ``cells`` and their descendants; their process groups get SIGTERM now.

    The kill timer (SIGKILL 2 s later to groups still alive) runs beside the actor
    ladder, so a command that traps SIGTERM is gone on time even if its owner is
    stuck waiting for it.
    """
    groups = {pgid for top in cells for member in top.subtree() for pgid in member.process_groups}
    if not groups:
        await stop_cells(cells, grace)
        return
    async with trio.open_nursery() as nursery:
        nursery.start_soon(terminate_groups, groups, cells[0].runtime.kill_grace)
        await stop_cells(cells, grace)


async def stop_cells(cells: list[Cell], grace: float) -> None:
    """The actor ladder for a set of cells: all their children first (recursively,
    as one generation), then close every mailbox at once, wait ``grace`` seconds for
    them to finish, and cancel those still running.

    Working a generation at a time, rather than a task per actor, keeps stopping
    ten thousand actors cheap; the order (children before parents) and each actor's
    full grace period are the same.
    """
    cells = [cell for cell in cells if not cell.finished]
    if not cells:
        return
    for cell in cells:
        cell.stop_requested = True
    children = [child for cell in cells for child in cell.children.values()]
    if children:
        await stop_cells(children, grace)
    for cell in cells:
        cell.close_inbox()
    with trio.move_on_after(grace):
        for cell in cells:
            await cell.wait_finished()
    stubborn = [cell for cell in cells if not cell.finished]
    for cell in stubborn:
        log.warning("%s ignored the stop request for %g s; cancelling it", cell.address, grace)
        cell.cancel()
    for cell in stubborn:
        await cell.wait_finished()
