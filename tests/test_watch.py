"""`jaxlings watch`: what each key does, saves during a check, and the terminal it leaves behind.

The loop is driven by a scripted event queue and a fake checker, so nothing
here depends on timing: the loop asks for its next event only when it is idle,
and a test that runs out of script fails instead of hanging.
"""

from __future__ import annotations

import io
import os
import queue
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from course.catalog import load_catalog
from course.engine.results import CheckOutcome, ExerciseResult
from course.shell.watching import WatchLoop

FIXTURE = Path(__file__).parent / "fixtures" / "course"


class Script(queue.Queue):
    """Events the learner produces while the loop is idle, in order. What a test puts on the
    queue during a check (a save, a key) is delivered first, like a real queue."""

    def __init__(self, idle_events):
        super().__init__()
        self.idle_events = list(idle_events)

    def get(self, block=True, timeout=None):
        if not self.empty() or not block:
            return super().get(block=False)
        if not self.idle_events:
            raise AssertionError("the loop waited for another event; the script has none left")
        return self.idle_events.pop(0)


def result(name, passed):
    checks = [CheckOutcome("test_it", "passed" if passed else "failed", None if passed else "wrong_result",
                           "" if passed else "Wrong result: 1 != 2", 0.01)]
    message = "All 1 checks passed." if passed else "Wrong result: 1 of 1 checks failed\n(seed 5)"
    return ExerciseResult(name, passed, None if passed else "wrong_result", message, checks, 0.1, 5)


class Checker:
    """Answers with the scripted verdicts; `during` puts events on the queue while a check runs."""

    def __init__(self, verdicts, during=None):
        self.verdicts = list(verdicts)
        self.during = during or {}
        self.calls = []
        self.events = None

    def __call__(self, exercise):
        self.calls.append(exercise.name)
        for event in self.during.get(len(self.calls), []):
            self.events.put(event)
        return result(exercise.name, self.verdicts.pop(0))


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    return load_catalog(root)


def make_loop(catalog, tmp_path, checker, idle_events, start="fx_scale"):
    events = Script(idle_events)
    checker.events = events
    out = io.StringIO()
    watched = []
    loop = WatchLoop(catalog, catalog.exercise(start), check=checker, console=Console(file=out, width=100),
                     events=events, keys=True, watch=lambda path, q: watched.append(path),
                     progress_path=tmp_path / "progress.json")
    return loop, out, watched


def path_of(catalog, name):
    return Path(catalog.exercise(name).exercise_path())


def test_saves_during_a_check_queue_one_more_check(catalog, tmp_path):
    scale = path_of(catalog, "fx_scale")
    # Two saves while the first (slow) check runs; a key typed then is dropped, except q.
    checker = Checker([False, False], during={1: [("saved", scale), ("key", "n"), ("saved", scale)],
                                             2: [("key", "q")]})
    loop, out, _ = make_loop(catalog, tmp_path, checker, [])
    assert loop.run() == 0
    assert checker.calls == ["fx_scale", "fx_scale"]


def test_a_save_to_another_file_is_ignored(catalog, tmp_path):
    checker = Checker([False], during={1: [("saved", path_of(catalog, "fx_stats"))]})
    loop, _, _ = make_loop(catalog, tmp_path, checker, [("saved", path_of(catalog, "fx_stats")), ("key", "q")])
    assert loop.run() == 0
    assert checker.calls == ["fx_scale"]


def test_n_moves_on_only_after_a_pass_and_never_by_itself(catalog, tmp_path):
    scale = path_of(catalog, "fx_scale")
    checker = Checker([False, True, False])
    loop, out, watched = make_loop(catalog, tmp_path, checker, [
        ("key", "n"),  # not passed yet: stays
        ("saved", scale),  # passes
        ("key", "n"),  # moves on, and checks the next one at once
        ("key", "q"),
    ])
    assert loop.run() == 0
    assert checker.calls == ["fx_scale", "fx_scale", "fx_stats"]
    text = out.getvalue()
    assert "`n` moves on once fx_scale passes" in text
    assert watched == [scale, path_of(catalog, "fx_stats")]
    from course.progress import Progress

    assert Progress.load(tmp_path / "progress.json").is_done("fx_scale")


def test_after_a_pass_the_loop_waits(catalog, tmp_path):
    checker = Checker([True])
    loop, out, _ = make_loop(catalog, tmp_path, checker, [])
    with pytest.raises(AssertionError, match="waited for another event"):
        loop.run()  # a pass, then it asks for the learner's next move instead of moving on
    assert checker.calls == ["fx_scale"]
    assert "n next" in out.getvalue()


def test_h_l_c_keys(catalog, tmp_path):
    checker = Checker([False, False])
    loop, out, _ = make_loop(catalog, tmp_path, checker,
                             [("key", "h"), ("key", "H"), ("key", "h"), ("key", "l"), ("key", "c"), ("key", "q")])
    assert loop.run() == 0
    text = out.getvalue()
    assert "Hint 1/2: Multiply." in text and "Hint 2/2: Return `x * alpha + 1`." in text
    assert "That was the last hint." in text
    assert "fixture course: 0/3 done" in text and "→ watching: fx_scale" in text
    assert checker.calls == ["fx_scale", "fx_scale"]
    assert "n next" not in text  # `n` is offered only after a pass
    from course.progress import Progress

    assert Progress.load(tmp_path / "progress.json").hint_level("fx_scale") == 2


def test_the_last_exercise_done(catalog, tmp_path):
    from course.progress import Progress

    progress = Progress.load(tmp_path / "progress.json")
    for name in ("fx_scale", "fx_stats"):
        progress.record(result(name, True))
    checker = Checker([True])
    loop, out, _ = make_loop(catalog, tmp_path, checker, [("key", "n"), ("key", "q")], start="fx_devices")
    assert loop.run() == 0
    assert "Every exercise is done!" in out.getvalue()
    assert checker.calls == ["fx_devices"]


def test_verdicts_clear_the_screen_only_on_a_real_terminal(catalog, tmp_path):
    for environ, clears in (({"TERM": "xterm-256color"}, True), ({"TERM": "dumb"}, False)):
        out = io.StringIO()
        console = Console(file=out, force_terminal=True, width=100, _environ=environ)
        loop = WatchLoop(catalog, catalog.exercise("fx_scale"), check=Checker([False]), console=console,
                         events=Script([("key", "q")]), keys=True, watch=lambda p, q: None,
                         progress_path=tmp_path / "progress.json")
        loop.check.events = loop.events
        assert loop.run() == 0
        assert ("\x1b[2J" in out.getvalue()) is clears


def test_single_keys_restores_the_terminal_even_after_an_error():
    import pty
    import termios

    from course.shell.terminal import single_keys

    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        with pytest.raises(RuntimeError):
            with single_keys(slave) as keys:
                assert keys is True
                assert not termios.tcgetattr(slave)[3] & (termios.ICANON | termios.ECHO)
                raise RuntimeError("boom")
        assert termios.tcgetattr(slave) == before
        read_end, write_end = os.pipe()  # not a terminal: nothing to change, and it says so
        with single_keys(read_end) as keys:
            assert keys is False
        os.close(read_end)
        os.close(write_end)
    finally:
        os.close(master)
        os.close(slave)


def _pty_env(tmp_path, **extra):
    root = tmp_path / "course"
    if not root.exists():
        shutil.copytree(FIXTURE, root)
        shutil.copytree(FIXTURE / "exercises", tmp_path / "ws" / "exercises")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    env.update(TERM="xterm-256color", JAXLINGS_COURSE_ROOT=str(root), JAXLINGS_WORKSPACE=str(tmp_path / "ws"),
               JAXLINGS_PROGRESS=str(tmp_path / "progress.json"))
    env.update(extra)
    env.pop("JAXLINGS_SEED", None)
    return env


def test_watch_on_a_terminal(tmp_path):
    from pty_run import PtyRun

    env = _pty_env(tmp_path)
    run = PtyRun(["watch", "fx_scale"], env)
    try:
        at = run.expect("checking fx_scale… ")  # the live line, before the first verdict
        at = run.expect(" s (your code may run 15 s)", at)
        at = run.expect("not passed yet", at)
        assert "\x1b[2J" in run.text()  # the screen was cleared for the verdict
        at = run.expect("q quit", at)
        run.send("h")
        at = run.expect("Hint 1/2: Multiply.", at)
        run.send("n")
        at = run.expect("moves on once fx_scale passes", at)
        solved = (FIXTURE / "solutions" / "01_basics" / "scale.py").read_text()
        (tmp_path / "ws" / "exercises" / "01_basics" / "scale.py").write_text(solved)
        at = run.expect("✓ fx_scale: passed", at)
        at = run.expect("n next", at)
        run.send("n")
        at = run.expect("fx_stats (2/3)", at)
        at = run.expect("q quit", at)
        run.send("q")
        assert run.finish() == 0
    finally:
        if run.proc.poll() is None:
            run.proc.kill()


def test_watch_on_a_dumb_terminal_draws_nothing_fancy(tmp_path):
    from pty_run import PtyRun

    run = PtyRun(["watch", "fx_scale"], _pty_env(tmp_path, TERM="dumb"))
    try:
        run.expect("q quit")
        run.send("q")
        assert run.finish() == 0
        assert "\x1b" not in run.text() and "not passed yet" in run.text()
    finally:
        if run.proc.poll() is None:
            run.proc.kill()


def test_no_color_and_dumb_terminals_get_no_colour(tmp_path):
    import re

    from pty_run import run_on_pty

    env = _pty_env(tmp_path)
    code, coloured = run_on_pty(["list"], env)
    assert code == 0 and re.search(r"\x1b\[[0-9;]*3\dm", coloured)  # the control: colour by default
    code, plain = run_on_pty(["list"], {**env, "NO_COLOR": "1"})
    assert code == 0 and "fx_scale" in plain and not re.search(r"\x1b\[[0-9;]*3\dm", plain)
    code, dumb = run_on_pty(["list"], {**env, "TERM": "dumb"})
    assert code == 0 and "fx_scale" in dumb and "\x1b" not in dumb


def test_check_shows_elapsed_time_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    import re

    from pty_run import run_on_pty

    from course.cli import main

    env = _pty_env(tmp_path)
    code, shown = run_on_pty(["check", "fx_scale"], env)
    assert code == 1 and "not passed yet" in shown
    assert re.search(r"checking fx_scale… \d+ s \(your code may run 15 s\)", shown)
    for name in ("JAXLINGS_COURSE_ROOT", "JAXLINGS_WORKSPACE", "JAXLINGS_PROGRESS"):
        monkeypatch.setenv(name, env[name])
    assert main(["check", "fx_scale", "--json"]) == 1
    captured = capsys.readouterr()
    assert "checking" not in captured.err and captured.out.lstrip().startswith("{")


def test_watch_without_a_terminal_rechecks_on_save_until_interrupted(tmp_path):
    import select
    import signal
    import subprocess
    import sys
    import time

    env = _pty_env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "course", "watch", "fx_scale"], cwd=Path(__file__).parents[1],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = b""

    def wait_for(text, count):
        nonlocal output
        end = time.monotonic() + 180
        while output.decode(errors="replace").count(text) < count:
            assert time.monotonic() < end and proc.poll() is None, output.decode(errors="replace")
            if select.select([proc.stdout], [], [], 1.0)[0]:
                output += os.read(proc.stdout.fileno(), 65536)

    try:
        wait_for("Ctrl-C to stop", 1)
        (tmp_path / "ws" / "exercises" / "01_basics" / "scale.py").write_text("def scale(x, alpha):\n    return x\n")
        wait_for("Ctrl-C to stop", 2)  # the save was checked
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)  # the CLI prints its threads' stacks: say where it is stuck
            time.sleep(2)
            while select.select([proc.stdout], [], [], 1.0)[0] and (chunk := os.read(proc.stdout.fileno(), 65536)):
                output += chunk
            raise AssertionError("watch did not end on Ctrl-C:\n" + output.decode(errors="replace")[-6000:]) from None
        end = time.monotonic() + 30  # the rest of its output; EOF once nothing holds the pipe any more
        while time.monotonic() < end and select.select([proc.stdout], [], [], 1.0)[0]:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            output += chunk
        text = output.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Interrupted." in text
    assert "\x1b" not in text and text.count("not passed yet") == 2
    assert "Wrong result" in text.split("Ctrl-C to stop")[1]


def test_verify_shows_which_check_runs_on_a_terminal(tmp_path):
    from pty_run import PtyRun

    run = PtyRun(["verify"], _pty_env(tmp_path))
    try:
        run.expect(" s (your code may run 15 s)", run.expect("checking fx_scale (1/3)… "))
        run.expect("checking fx_stats (2/3)…")
        run.expect("0/3 exercises pass")
        assert run.finish() == 1
    finally:
        if run.proc.poll() is None:
            run.proc.kill()


def test_arrow_keys_are_not_letters():
    from course.shell.watching import plain_keys

    assert plain_keys("h") == ["h"]
    assert plain_keys("\x1b[C\x1b[D\x1bOAq") == ["q"]  # right, left, up (application mode), then q
    assert plain_keys("\x1b[1;5Cn") == ["n"]  # Ctrl+Right
    assert plain_keys("\x1b") == [] and plain_keys("\r\n\x7f") == []


def test_ctrl_c_wakes_a_waiting_watch_when_another_thread_receives_it():
    """The kernel may hand SIGINT to any thread (the file watcher's, the output drain's); Python
    runs the handler in the main thread only once that thread wakes. A watch waiting for a save
    must still stop at once: the signal is sent here to a bystander thread, never the main one."""
    import signal
    import threading
    import time

    loop = WatchLoop(None, None, check=lambda exercise: None, console=Console(file=io.StringIO()),
                     events=queue.Queue())
    done = threading.Event()
    bystander = threading.Thread(target=done.wait, args=(60,), daemon=True)
    bystander.start()

    def rescue() -> None:  # a wait that never wakes would hang the suite: end it, and fail below
        if not done.wait(30):
            loop.events.put(("key", "q"))

    threading.Thread(target=rescue, daemon=True).start()
    sender = threading.Timer(0.3, signal.pthread_kill, args=(bystander.ident, signal.SIGINT))
    start = time.monotonic()
    sender.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            loop._next_event()
        waited = time.monotonic() - start
    finally:
        done.set()
        sender.cancel()
    assert waited < 15, f"Ctrl-C was seen only after {waited:.1f} s"
