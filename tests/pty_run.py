"""Run a command on a pseudo-terminal, as a learner's shell would, and collect what it drew."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")


class PtyRun:
    """A child on a pty. `expect` reads until a text appears (a deadline guards against a hang,
    it does not stand in for synchronisation); `send` types keys."""

    def __init__(self, argv: list[str], env: dict[str, str], cols: int = 100, rows: int = 40) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen([sys.executable, "-m", "course", *argv], cwd=REPO, env=env,
                                     stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        self.output = b""

    def _read_some(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.output += chunk
        return True

    def plain(self) -> str:
        """The output without terminal escape sequences (styles, cursor moves)."""
        return ANSI.sub("", self.text())

    def expect(self, text: str, start: int = 0, deadline_s: float = 180.0) -> int:
        """Wait until `text` appears in the plain output after offset `start`; returns the offset after it."""
        end = time.monotonic() + deadline_s
        while True:
            i = self.plain().find(text, start)
            if i >= 0:
                return i + len(text)
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} never appeared; output so far:\n{self.text()[-3000:]}")
            if not self._read_some(1.0):
                raise AssertionError(f"the program ended before {text!r}:\n{self.text()[-3000:]}")

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self, deadline_s: float = 120.0) -> int:
        end = time.monotonic() + deadline_s
        while self._read_some(1.0):
            if time.monotonic() > end:
                self.proc.kill()
                raise AssertionError(f"the program did not end:\n{self.text()[-3000:]}")
        code = self.proc.wait(timeout=deadline_s)
        os.close(self.master)
        return code

    def text(self) -> str:
        return self.output.decode("utf-8", errors="replace")


def run_on_pty(argv: list[str], env: dict[str, str], **kw) -> tuple[int, str]:
    run = PtyRun(argv, env, **kw)
    code = run.finish()
    return code, run.text()
