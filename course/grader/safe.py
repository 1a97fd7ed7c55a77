"""Learner-controlled text made safe for every output the grader writes.

Messages, printed output, file names and notes come from graded code or from
the learner's files. They may hold lone surrogates (which no UTF-8 writer can
encode), control characters (which XML 1.0 forbids and which drive a terminal:
`\\x1b[2J`, `\\x9b`), bidirectional overrides that reorder what a reader sees,
and cells a spreadsheet would run as a formula. Every writer (report.json,
gradebook.csv, junit.xml, feedback, results.json, the terminal summary) passes
what it writes through this module, so one hostile learner cannot break or
abuse the class's reports.
"""

from __future__ import annotations

import re

# Tab and newline stay: messages are multi-line. Everything else below 0x20,
# DEL, the C1 block, surrogates, the two non-characters XML 1.0 forbids and
# the bidirectional controls is shown as a visible escape instead.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
    "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape (file names)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def text(value: object) -> str:
    """`value` as a string holding only characters every output can carry.

    CR LF and lone CR become LF, so a message keeps its lines and nothing can
    overwrite a line already shown.
    """
    if value is None:
        return ""
    s = value if isinstance(value, str) else str(value)
    s = s.replace("\r\n", "\n")
    return _UNSAFE.sub(_escape, s.replace("\r", "\n"))


def clean(data):
    """A copy of a JSON-ready structure with every string (keys too) passed through `text`."""
    if isinstance(data, str):
        return text(data)
    if isinstance(data, dict):
        return {text(k) if isinstance(k, str) else k: clean(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [clean(v) for v in data]
    if isinstance(data, float) and data != data:  # NaN is not JSON
        return None
    return data


def one_line(value: object, limit: int = 200) -> str:
    """For a single terminal or table cell: no line breaks, bounded length."""
    s = text(value).replace("\n", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def csv_cell(value: object) -> str:
    """A cell no spreadsheet will run: a leading = + - @ (or tab, CR) gets a quote mark before it."""
    s = one_line(value, limit=1000)
    if s.startswith(_FORMULA_START):
        return "'" + s
    return s
