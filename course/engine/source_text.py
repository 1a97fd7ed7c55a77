"""Whether a learner's file is UTF-8 text: one rule for the child that loads it, the
editor and `jaxlings reset` (re-exported by `course.workspace`).

In the engine because the learner's process, sandboxed, sees no other part of `course`.
"""

from __future__ import annotations


def first_non_utf8(data: bytes) -> tuple[int, int] | None:
    """(line, byte) of the first byte that is not UTF-8, or None if `data` is UTF-8 text."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return data.count(b"\n", 0, e.start) + 1, data[e.start]
    return None


def utf8_problem(data: bytes, display: str) -> str | None:
    """None if `data` is UTF-8 text, else a sentence naming the first bad byte and its line.

    Strict on purpose, whatever a coding cookie says: the course's editor, its
    checks and its diffs all read the learner's file as UTF-8, and they must all
    agree on whether the file is readable.
    """
    bad = first_non_utf8(data)
    if bad is None:
        return None
    line, byte = bad
    return (f"{display} is not UTF-8 text (byte 0x{byte:02x} at line {line}); "
            "Python reads source files as UTF-8. Save it as UTF-8 in your editor.")
