"""``troupe serve`` makes full garbage collections rarer, and only while it runs."""

from __future__ import annotations

import gc

from actors.server.collector import FULL_COLLECTION_EVERY, collector_tuned_for_many_sessions


def test_full_collections_are_rarer_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with collector_tuned_for_many_sessions():
            assert gc.get_threshold() == (700, 10, FULL_COLLECTION_EVERY)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_a_host_that_already_collects_less_often_is_left_as_it_is() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(5000, 20, 500)
        with collector_tuned_for_many_sessions():
            assert gc.get_threshold() == (5000, 20, 500)
    finally:
        gc.set_threshold(*before)
