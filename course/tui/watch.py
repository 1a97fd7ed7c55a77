"""Notice when the learner's file changes on disk, whoever changed it.

Events come from watchfiles; the file's size and mtime are also compared every
second, because events go missing on some file systems (WSL mounts, NFS,
network shares) and a learner must never have to guess whether a save counted.
Runs in a worker thread; `stop` ends it within a second.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

POLL_SECONDS = 1.0


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def watch_file(
    path: Path,
    stop: threading.Event,
    on_change: Callable[[str], None],
    on_unreadable: Callable[[], None] | None = None,
) -> str:
    """Call `on_change(text)` after each change to `path` until `stop` is set;
    `on_unreadable()` when it changes into something that is not UTF-8 text or
    disappears.

    Returns how it watched ("events" or "polling") for the status line.
    """
    path = Path(path)
    last = _signature(path)

    def look() -> None:
        nonlocal last
        sig = _signature(path)
        if sig == last:
            return
        last = sig
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            if on_unreadable is not None:
                on_unreadable()
            return
        on_change(text)

    try:
        import watchfiles

        # The folder, not the file: editors that save by renaming a temp file
        # over the original (vim, many IDEs) would end a watch on the file itself.
        for _changes in watchfiles.watch(
            path.parent,
            stop_event=stop,
            debounce=200,
            rust_timeout=int(POLL_SECONDS * 1000),
            yield_on_timeout=True,
            recursive=False,
            raise_interrupt=False,
        ):
            look()
        return "events"
    except Exception:
        # No usable notifications here (inotify limits, exotic file systems): poll.
        while not stop.wait(POLL_SECONDS):
            look()
        return "polling"
