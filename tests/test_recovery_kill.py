"""The app killed while the learner types: unsaved edits survive, the file is untouched.

The real app runs on a pseudo-terminal. Seeded random edits (letters, spaces,
Enter, Backspace) are typed into an exercise at random moments, and the app is
ended the ways a learner's work gets cut off: the terminal closes (SIGHUP, with the
terminal gone), SIGTERM, and SIGKILL (which nothing can catch: it comes right
after the copy on disk was seen to hold the edits so far, plus more typing).
Then the app starts again, and:

- nothing typed before the last copy is lost: the copy in .jaxlings/recovery/
  holds the buffer as it was after some prefix of the keys, never less than
  what the last synchronisation point saw (for SIGHUP and SIGTERM, everything
  the app had drawn on the screen);
- the app offers the copy beside the file, and the learner's answer (Esc,
  keep the file, use the edits) loses nothing: an earlier copy is moved aside
  into a dated one, never overwritten;
- the exercise file's bytes never change (nothing here asks for a save).

Synchronisation is on what the app draws and on the copy's bytes, never on
sleeps; the deadlines only stop a hang. JAXLINGS_KILL_ROUNDS (default 2) and
JAXLINGS_KILL_SEED choose how many kills per signal and which edits.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest

from course.tui.widgets.editor import indent_after

pytestmark = [pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")]

COURSE = Path(__file__).parent / "tui" / "course"
SEED = int(os.environ.get("JAXLINGS_KILL_SEED", "39"))
ROUNDS = int(os.environ.get("JAXLINGS_KILL_ROUNDS", "2"))
LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
DEADLINE_S = 180.0
SCALE = "exercises/01_arrays/scale.py"
OFFER = "had unsaved edits when jaxlings"
LOADED = "Write scale(x, alpha) returning"  # the Task pane, drawn once the file has loaded


class Buffer:
    """What the editor holds: `base` with text typed in front of it (the cursor starts at
    the top of a freshly loaded file). Each key is applied as the editor applies it."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.typed = ""

    def press(self, key: str) -> None:
        if key == "\x7f":
            self.typed = self.typed[:-1]
        elif key == "\r":
            self.typed += "\n" + indent_after(self.typed.split("\n")[-1])
        else:
            self.typed += key

    def text(self) -> str:
        return self.typed + self.base


def random_keys(rng: random.Random, count: int, rub_out: int = 0) -> list[str]:
    """Letters, spaces and Enter, ending in a letter (so that no batch leaves the buffer
    equal to the file), then up to `rub_out` Backspaces over that batch's last word.

    Backspace comes only last, so that what is asserted here is the keeping of edits,
    not the order in which the editor applies a Backspace among keys queued behind it."""
    keys = []
    for _ in range(count):
        roll = rng.random()
        keys.append("\r" if roll < 0.1 else " " if roll < 0.2 else rng.choice(LETTERS))
    keys.append(rng.choice(LETTERS))
    word = len(keys) - max((i + 1 for i, k in enumerate(keys) if k in "\r "), default=0)
    return keys + ["\x7f"] * rng.randint(0, min(rub_out, word))


def states(buffer: Buffer, keys: list[str]) -> list[str]:
    """The buffer after each prefix of `keys` (0 to all), applied to a copy of `buffer`."""
    probe = Buffer(buffer.base)
    probe.typed = buffer.typed
    out = [probe.text()]
    for key in keys:
        probe.press(key)
        out.append(probe.text())
    return out


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(COURSE / "exercises", ws / "exercises")
    return ws


def app_env(ws: Path, delay: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    env.update(JAXLINGS_COURSE_ROOT=str(COURSE), JAXLINGS_WORKSPACE=str(ws), JAXLINGS_PROGRESS=str(ws / "progress.json"),
               JAXLINGS_SEED="1234", JAXLINGS_LANG="en", JAXLINGS_AUTOSAVE_DELAY=str(delay), TERM="xterm-256color")
    return env


class App:
    def __init__(self, env: dict[str, str]) -> None:
        from pty_run import PtyRun

        self.run = PtyRun([], env, cols=80, rows=24)
        self.mark = 0  # expect() looks at what was drawn after this offset

    def expect(self, text: str) -> None:
        self.mark = self.run.expect(text, self.mark, deadline_s=DEADLINE_S)

    def edit(self) -> None:
        """Into the editor (e), and wait until it has the focus: keys sent before that would
        be the screen's letter keys, not text. With the focus there, the footer shows no letters."""
        self.send("e")
        end = time.monotonic() + DEADLINE_S
        while not any(text in self.run.plain()[self.mark:] for text in ("Back f1 Help", "Backf1 Help")):
            if time.monotonic() > end or not self.run._read_some(0.2):
                raise AssertionError(f"the editor never took the focus:\n{self.run.plain()[-2000:]}")
        self.mark = len(self.run.plain())

    def send(self, keys) -> None:
        self.run.send("".join(keys))

    def wait_for(self, condition, what: str) -> None:
        """Read the terminal (so the app never blocks on a full one) until `condition()` holds."""
        end = time.monotonic() + DEADLINE_S
        while not condition():
            if time.monotonic() > end:
                raise AssertionError(f"{what} never happened; the screen:\n{self.run.plain()[-2000:]}")
            if not self.run._read_some(0.05) and self.run.proc.poll() is not None:
                raise AssertionError(f"the app ended before {what}:\n{self.run.plain()[-2000:]}")

    def end(self, signum: int) -> int:
        """End the app with `signum` (SIGHUP: the terminal goes away first, as when it is closed)."""
        if signum == signal.SIGHUP:
            os.close(self.run.master)
            self.run.proc.send_signal(signum)
        else:
            self.run.proc.send_signal(signum)
            end = time.monotonic() + DEADLINE_S
            while self.run._read_some(0.2) and time.monotonic() < end:
                pass
            os.close(self.run.master)
        try:
            return self.run.proc.wait(timeout=DEADLINE_S)
        finally:
            if self.run.proc.poll() is None:
                self.run.proc.kill()
                self.run.proc.wait()


def recovery_files(ws: Path) -> dict[str, bytes]:
    folder = ws / ".jaxlings" / "recovery"
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} if folder.is_dir() else {}


def assert_all_kept(ws: Path, copies: list[bytes]) -> None:
    """Each earlier copy is still on disk: as it was (set aside, or still offered), or as the
    end of a later copy (taken into the editor, then typed in front of)."""
    files = recovery_files(ws).values()
    for earlier in copies:
        assert any(f.endswith(earlier) for f in files), f"an earlier copy was lost:\n{earlier!r}"


def copy_of(ws: Path) -> bytes | None:
    return recovery_files(ws).get("scale.unsaved.py")


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGKILL], ids=["SIGHUP", "SIGTERM", "SIGKILL"])
def test_unsaved_edits_survive_the_end_of_the_app(workspace, signum):
    rng = random.Random(SEED * 100 + signum)
    original = (workspace / SCALE).read_bytes()
    # SIGHUP and SIGTERM: no copy by the timer, so the one found is the app's last act.
    # SIGKILL: a short delay, and the kill comes once the copy has been seen on disk.
    delay = 0.2 if signum == signal.SIGKILL else 3600.0
    env = app_env(workspace, delay)

    app = App(env)
    app.expect("→ scale")  # the map, loaded
    app.send("n")
    app.expect(LOADED)
    buffer = Buffer(original.decode())
    everything_kept: list[bytes] = []  # each round's copy: none may disappear later

    for round_ in range(ROUNDS):
        app.edit()
        first = random_keys(rng, rng.randint(3, 25))
        app.send(first)
        for key in first:
            buffer.press(key)
        if signum == signal.SIGKILL:
            expected = buffer.text().encode()
            app.wait_for(lambda: copy_of(workspace) == expected, "the copy of the first edits")
        else:
            marker = f"QZ{round_}X"  # letters the random keys never type: drawn only after every key before it
            app.send(marker)
            for key in marker:
                buffer.press(key)
            app.expect(marker)
            assert copy_of(workspace) in (None, *everything_kept), "a copy was written before the signal"
        # More typing, and the end comes while the app may still be reading it.
        more = random_keys(rng, rng.randint(0, 15), rub_out=3) if rng.random() < 0.7 else []
        app.send(more)
        allowed = [s.encode() for s in states(buffer, more)]
        code = app.end(signum)

        if signum != signal.SIGKILL:
            assert code == 128 + signum, f"the app did not end through its handler (exit status {code})"
        assert (workspace / SCALE).read_bytes() == original, "the exercise file changed behind the learner"
        kept = copy_of(workspace)
        assert kept in allowed, (
            f"the copy after {signal.Signals(signum).name} is not the buffer at or after the last synchronisation:\n"
            f"{kept!r}\nexpected one of:\n{allowed!r}")
        everything_kept.append(kept)
        assert_all_kept(workspace, everything_kept)

        # The next start offers the copy; the answer is the learner's.
        app = App(env)
        app.expect(OFFER)
        assert (workspace / SCALE).read_bytes() == original
        answer = rng.choice(["later", "disk", "mine"])
        if answer == "later":
            app.send("\x1b")
            app.expect("Nothing changed")
            buffer = Buffer(original.decode())
        else:
            # The dialog ignores Tab, arrows and Enter until the keyboard has been quiet a moment.
            from course.tui.screens.deliberate import DeliberateScreen

            time.sleep(DeliberateScreen.QUIET_S + 0.3)
            app.send(["\x1b[C"] * (1 if answer == "disk" else 2) + ["\r"])
            app.expect("File kept" if answer == "disk" else "Edits recovered")
            buffer = Buffer(kept.decode() if answer == "mine" else original.decode())
        assert (workspace / SCALE).read_bytes() == original
        files = recovery_files(workspace)
        if answer == "disk":
            assert "scale.unsaved.py" not in files
        else:
            assert files["scale.unsaved.py"] == kept

    assert app.end(signal.SIGTERM) == 128 + signal.SIGTERM
    assert (workspace / SCALE).read_bytes() == original
    assert_all_kept(workspace, everything_kept)
