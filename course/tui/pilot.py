"""Helpers for driving the app headless (Textual's `run_test` pilot): the tests
and `docs/screenshots.py` wait the same way before they look at the screen."""

from __future__ import annotations


async def settle(pilot, extra_pause: float | None = None) -> None:
    """Wait until every worker but the file watcher has finished, including
    workers started by the ones that just finished."""
    app = pilot.app
    await pilot.pause()  # a screen just pushed starts its workers when it mounts
    for _ in range(20):
        busy = [w for w in app.workers if w.group != "watch" and not w.is_finished]
        if not busy:
            break
        await app.workers.wait_for_complete(busy)
        await pilot.pause()
    await pilot.pause(extra_pause)
