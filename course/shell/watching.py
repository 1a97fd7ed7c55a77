"""`jaxlings watch`: re-check on every save, keys to move on, ask for a hint, list, quit.

Everything that happens arrives as an event on one queue: ("saved", path) from
a file watcher thread, ("key", "h") from a key reader thread. The loop checks in
its own thread and handles events in between, so:

- a save made while a check runs is not lost: it is waiting on the queue when
  the check ends, and it triggers one more check (several saves, one check);
- keys typed during a check are dropped (except `q`), so a stray `n` can't
  skip an exercise whose verdict the learner has not seen;
- nothing moves on by itself: `n` does, and only after a pass.

The checker, the file watcher and the queue are parameters, which lets the
tests drive the loop with no timing at all.
"""

from __future__ import annotations

import argparse
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from course.i18n import N_, _
from course.shell.terminal import can_redraw, safe_text

POLL_SECONDS = 1.0
KEYS_HELP = {"n": N_("next"), "h": N_("hint"), "l": N_("list"), "c": N_("check again"), "q": N_("quit")}


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


class FileWatcher:
    """A thread that puts ("saved", path) on `events` each time `path` changes on disk.

    The baseline is taken when it is created, so a save that lands during the
    first check counts. File events come from watchfiles, on the folder (editors
    save by renaming a temp file over the original); the size and mtime are also
    compared every second because events go missing on WSL mounts and network
    drives. `poll=True` skips events entirely.
    """

    def __init__(self, path: Path, events: queue.Queue, poll: bool = False) -> None:
        self.path = Path(path)
        self.events = events
        self.poll = poll
        self.how = _("polling every second") if poll else _("on save")
        self._last = _signature(self.path)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watch {self.path.name}", daemon=True)

    def start(self) -> "FileWatcher":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _look(self) -> None:
        sig = _signature(self.path)
        if sig is not None and sig != self._last:
            self._last = sig
            self.events.put(("saved", self.path))

    def _run(self) -> None:
        if not self.poll:
            try:
                import watchfiles

                for _changes in watchfiles.watch(
                    self.path.parent, stop_event=self._stop, debounce=200,
                    rust_timeout=int(POLL_SECONDS * 1000), yield_on_timeout=True,
                    recursive=False, raise_interrupt=False,
                ):
                    self._look()
                return
            except Exception as e:  # noqa: BLE001 - e.g. inotify limits: poll rather than stop
                self.how = _("polling every second (no file events here: {error})").format(error=e)
        while not self._stop.wait(POLL_SECONDS):
            self._look()


def plain_keys(typed: str) -> list[str]:
    """The printable keys in what the terminal sent, without escape sequences: an arrow key
    arrives as ESC [ C, and its "C" must not count as `c`."""
    keys = []
    i = 0
    while i < len(typed):
        ch = typed[i]
        if ch == "\x1b":
            i += 1
            if i < len(typed) and typed[i] in "[O":  # CSI or SS3: parameters, then one final byte
                i += 1
                while i < len(typed) and not ("@" <= typed[i] <= "~"):
                    i += 1
            i += 1
            continue
        if ch.isprintable():
            keys.append(ch)
        i += 1
    return keys


def read_keys(fd: int, events: queue.Queue) -> threading.Thread:
    """A thread that puts ("key", ch) for each key typed on `fd` (already in cbreak mode)."""

    def run() -> None:
        while True:
            try:
                data = os.read(fd, 32)
            except OSError:
                return
            if not data:
                return
            for key in plain_keys(data.decode("utf-8", errors="ignore")):
                events.put(("key", key))

    thread = threading.Thread(target=run, name="watch keys", daemon=True)
    thread.start()
    return thread


class WatchLoop:
    """The state of one `jaxlings watch` session. `run()` returns the exit code."""

    def __init__(
        self,
        catalog: Any,
        exercise: Any,
        *,
        check: Callable[[Any], Any],
        console: Console,
        events: queue.Queue | None = None,
        keys: bool = False,
        watch: Callable[[Path, queue.Queue], Any] | None = None,
        checking: Callable[[Any], Any] | None = None,
        progress_path: str | os.PathLike | None = None,
    ) -> None:
        self.catalog = catalog
        self.exercise = exercise
        self.check = check
        self.console = console
        self.events = events if events is not None else queue.Queue()
        self.keys = keys  # whether keys can arrive (a terminal); otherwise only saves and Ctrl-C
        self.watch = watch or (lambda path, events: FileWatcher(path, events).start())
        self.checking = checking  # a context manager around each check (the elapsed-time line)
        self.progress_path = progress_path
        self.passed = False
        self.checks_run = 0
        self._watcher: Any = None
        self._backlog: deque = deque()

    # -- the loop ------------------------------------------------------------------
    def run(self) -> int:
        try:
            self._switch_to(self.exercise)
            if self._check_until_quiet():
                return 0
            while True:
                kind, value = self._next_event()
                if kind == "saved" and Path(value) == self._path():
                    if self._check_until_quiet():
                        return 0
                elif kind == "key":
                    outcome = self._on_key(value)
                    if outcome is not None:
                        return outcome
        finally:
            self._stop_watching()

    def _next_event(self) -> tuple[str, Any]:
        if self._backlog:
            return self._backlog.popleft()
        # Waited on in slices: Ctrl-C's handler runs in this thread only once it wakes, and the
        # kernel may deliver SIGINT to another thread (the file watcher's), which would leave an
        # endless wait asleep for ever.
        while True:
            try:
                return self.events.get(timeout=0.2)
            except queue.Empty:
                continue

    def _check_until_quiet(self) -> bool:
        """Check; check again while saves arrived meanwhile. True if `q` was pressed."""
        while True:
            result = self._run_check()
            # What arrived during the check is taken off the queue *before* the verdict
            # and its keys are shown: a key pressed after the learner saw "h hint" is
            # then never mistaken for one typed during the check.
            again = False
            quit_pressed = False
            while True:
                try:
                    kind, value = self.events.get_nowait()
                except queue.Empty:
                    break
                if kind == "saved" and Path(value) == self._path():
                    again = True
                elif kind == "key" and value.lower() == "q":
                    quit_pressed = True
                elif kind not in ("saved", "key"):
                    self._backlog.append((kind, value))
            self._show(result)
            if quit_pressed:
                return True
            if not again:
                return False

    def _run_check(self) -> Any:
        """Check and record the verdict; showing it is the caller's part."""
        import contextlib

        guard = self.checking(self.exercise) if self.checking else contextlib.nullcontext()
        with guard as landed:
            # Each test's verdict is shown as it lands (`elapsed_line`), the first failure at once.
            result = self.check(self.exercise, on_outcome=landed) if landed else self.check(self.exercise)
        self.checks_run += 1
        self.passed = bool(result.passed)
        self._record(result)
        return result

    def _on_key(self, key: str) -> int | None:
        key = key.lower()
        if key == "q":
            return 0
        if key in ("c", "r"):
            if self._check_until_quiet():
                return 0
        elif key == "h":
            self._hint()
        elif key == "l":
            self._list()
        elif key == "n":
            if not self.passed:
                self._say(_("`n` moves on once {exercise} passes. Save your file to check it again.").format(
                    exercise=self.exercise.name))
                return None
            following = self._next_pending()
            if following is None:
                self.console.print(_("[bold green]Every exercise is done![/] "
                                     "`jaxlings verify` re-checks them all. Press q to quit."))
                return None
            self._switch_to(following)
            if self._check_until_quiet():
                return 0
        return None

    # -- moving between exercises ----------------------------------------------------
    def _path(self) -> Path:
        return Path(self.exercise.exercise_path())

    def _switch_to(self, exercise: Any) -> None:
        from course.workspace import localize_starter

        self._stop_watching()
        self.exercise = exercise
        self.passed = False
        localize_starter(exercise, self.progress_path)  # the first time: the starter in the learner's language
        self._watcher = self.watch(self._path(), self.events)

    def _stop_watching(self) -> None:
        if self._watcher is not None and hasattr(self._watcher, "stop"):
            self._watcher.stop()
        self._watcher = None

    def _next_pending(self) -> Any:
        """The first exercise after this one that is not done, wrapping round (None: all done)."""
        from course.progress import Progress

        progress = Progress.load(self.progress_path)
        order = list(self.catalog.exercises)
        names = [e.name for e in order]
        start = names.index(self.exercise.name) + 1 if self.exercise.name in names else 0
        for ex in order[start:] + order[:start]:
            if ex.name != self.exercise.name and not progress.is_done(ex.name):
                return ex
        return None

    # -- output --------------------------------------------------------------------
    def _record(self, result: Any) -> None:
        from course.progress import Progress

        progress = Progress.load(self.progress_path)
        progress.record(result)
        for warning in progress.warnings:
            self._say(f"[red]{escape(warning)}[/]", markup=True)

    def _show(self, result: Any) -> None:
        from course.shell.commands import print_result

        console = self.console
        names = [e.name for e in self.catalog.exercises]
        position = f" ({names.index(self.exercise.name) + 1}/{len(names)})" if self.exercise.name in names else ""
        if can_redraw(console):
            console.clear()
        else:
            console.print()
            console.rule(style="dim")
        console.print(f"[bold]{escape(self.exercise.name)}[/]{position}  {escape(safe_text(str(self._path())))}")
        print_result(console, result, after_pass=None)
        self._help()

    def _help(self) -> None:
        how = escape(getattr(self._watcher, "how", None) or _("on save"))
        if self.keys:
            keys = [k for k in KEYS_HELP if k != "n" or self.passed]
            menu = "  ".join(f"[bold]{k}[/] {_(KEYS_HELP[k])}" for k in keys)
            self.console.print(f"{menu}   [dim]" + _("(re-checks {how})").format(how=how) + "[/]")
        else:
            self.console.print("[dim]" + _("Watching {path} ({how}). Ctrl-C to stop. If saving does not re-check "
                                           "(WSL, network drives), use `jaxlings watch --poll`.").format(
                path=escape(safe_text(str(self._path()))), how=how) + "[/]")

    def _say(self, text: str, markup: bool = False) -> None:
        self.console.print(text, markup=markup)

    def _hint(self) -> None:
        from course.i18n import content
        from course.progress import Progress

        ex = self.exercise
        if not ex.hints:
            self._say(_("{exercise} has no hints.").format(exercise=ex.name))
            return
        progress = Progress.load(self.progress_path)
        already = progress.hint_level(ex.name)
        level = progress.reveal_hint(ex.name, available=len(ex.hints))
        for i, hint in enumerate(map(content, ex.hints[:level]), 1):
            style = None if i == level else "dim"
            self.console.print(_("[bold]Hint {n}/{total}:[/] {hint}").format(n=i, total=len(ex.hints),
                                                                             hint=escape(hint)), style=style)
        if already >= len(ex.hints):
            self.console.print("[dim]" + _("That was the last hint.") + "[/]")

    def _list(self) -> None:
        from course.shell.commands import print_list
        from course.progress import Progress

        print_list(self.console, self.catalog, Progress.load(self.progress_path), current=self.exercise.name)
        self._help()


# -- the command ------------------------------------------------------------------------


def cmd_watch(args: argparse.Namespace) -> int:
    """`jaxlings watch`: check the exercise every time it is saved (the shell's commands stand
    below this module: watch uses them, they never use watch)."""
    import sys

    from course.shell.commands import (EXIT_OK, EXIT_USAGE, _catalog, _checking_line, _console, _err,
                                       _exercise, _isolation_notice)
    from course.engine.runner import CheckSession, workspace_compile_cache
    from course.progress import Progress
    from course.shell.terminal import single_keys

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    if args.name:
        ex = _exercise(catalog, args.name)
        if ex is None:
            return EXIT_USAGE
    else:
        ex = Progress.load().next_pending(catalog)
        if ex is None:
            _console().print(_("[green]Every exercise is done.[/] `jaxlings verify` re-checks them all."))
            return EXIT_OK
    from course.engine.settings import draw_seed

    try:
        draw_seed()  # a bad JAXLINGS_SEED is a usage error now, not a crash at the first check
    except ValueError as e:
        _err(str(e))
        return EXIT_USAGE
    console = _console()
    _isolation_notice()
    with CheckSession(compile_cache=workspace_compile_cache()) as session, single_keys() as keys:
        loop = WatchLoop(
            catalog, ex,
            check=session.run,
            console=console,
            keys=keys,
            watch=lambda path, events: FileWatcher(path, events, poll=args.poll).start(),
            checking=_checking_line,
        )
        if keys:
            read_keys(sys.stdin.fileno(), loop.events)
        return loop.run()


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """`jaxlings watch`'s arguments: the same exercise argument as `check`, and `--poll`."""
    from course.shell.commands import add_arguments as shell_arguments

    shell_arguments(parser, name)


def run(args: argparse.Namespace) -> int:
    return cmd_watch(args)
