"""What a lesson quotes as output, compared with what its blocks really printed.

Two kinds of quotes are checked, in every lesson of both editions:

- A ```text (or console/pytb) block right after a runnable block (`warns=Name` marks
  one that warns on purpose) quotes that block's
  output: for a `raises=` block, the exception as Python prints it
  (`Name: message`, with any lines after it), optionally preceded by what the block
  printed first; for any other block, everything it printed (stdout, and warnings as
  `Category: message`), in order. A quoted error or warning after anything else (prose)
  is a failure: nothing could check it.
- A `# → value` comment on a line of a runnable block quotes what that statement
  printed; on a line of its own, it quotes the statement above it, and the comment
  lines right under it continue the quote. Text after ` — ` is an explanation, not output. Output over several lines
  is written on one line (each line break and the indentation after it become one
  space), as NumPy's 2-D arrays usually are in comments.

Before comparing, both sides are normalised for what differs from run to run or
between the editions: JAX's note on its filtered traceback, line numbers (`lesson.md:194:1`, `line 12`), temporary
directories, and object addresses (`0x7f…`). Trailing spaces are ignored. A quote
line that is only `...` stands for one or more lines left out. Anything else that
differs is a failure.

The blocks run once (course/lesson_run.py, on the English edition); the Japanese
edition has the same code blocks, line for line, where only explanatory comments are
translated and every output quote is the English one (tests/test_i18n.py,
`translated_code_differs` below), so its quotes are compared with the same run.
"""

from __future__ import annotations

import ast
import importlib
import re
import tempfile

from course.lessons import CodeBlock, LessonText, SideBySide

QUOTE_LANGUAGES = ("text", "console", "pytb")
ARROW = re.compile(r"#\s*→\s?(?P<value>.*?)\s*$")
EXPLANATION = " — "
ELISION = "..."

_LINE_NUMBERS = [
    (re.compile(r"(\.(?:md|py))((?::\d+)+)"), r"\1:N"),
    (re.compile(r"\bline \d+\b"), "line N"),
]
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_TEMP_DIRS = sorted({"/tmp", "/var/tmp", tempfile.gettempdir()}, key=len, reverse=True)
_TEMP = re.compile("(?:" + "|".join(re.escape(d) for d in _TEMP_DIRS) + r")/[^\s/'\"]+")
# JAX's note under every error it raised through a transformation; it depends on
# JAX_TRACEBACK_FILTERING, not on the error.
_JAX_FILTER_NOTE = re.compile(r"\n-{20}\nFor simplicity, JAX has removed its internal frames[^\n]*")
_EXCEPTION_HEADER = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?P<rest>:.*|)$")


def normalise(text: str) -> str:
    text = _JAX_FILTER_NOTE.sub("", text)
    for pattern, replacement in _LINE_NUMBERS:
        text = pattern.sub(replacement, text)
    text = _TEMP.sub("<tmp>", text)
    text = _ADDRESS.sub("0x…", text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def on_one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text.strip("\n"))


def _match_lines(quoted: list[str], real: list[str]) -> bool:
    """`quoted` equals `real`, where a line `...` in `quoted` stands for one or more lines."""
    if not quoted:
        return not real
    if quoted[0] == ELISION:
        return any(_match_lines(quoted[1:], real[k:]) for k in range(1, len(real) + 1))
    return bool(real) and quoted[0] == real[0] and _match_lines(quoted[1:], real[1:])


def _diff(quoted: str, real: str) -> str:
    return f"the lesson quotes:\n{quoted}\n--- the block printed:\n{real}"


def _exception_name_agrees(quoted_name: str, real: dict) -> bool:
    """`jax.errors.KeyReuseError` for a class defined in `jax._src.errors`: the quoted name
    is the class's own name, or a public dotted path that leads to the same class."""
    if quoted_name == real["name"]:
        return True
    module, _, attr = quoted_name.rpartition(".")
    if attr != real["name"] or not module:
        return False
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return False
    return f"{cls.__module__}.{cls.__qualname__}" == real.get("qualname")


def compare_quote(quote: str, entry: dict) -> str | None:
    """None if the ```text block `quote` says what the block of `entry` printed, else why not."""
    quoted = normalise(quote).splitlines()
    output = normalise(entry["output"])
    exc = entry.get("exception")
    if exc is None:
        real = output.splitlines()
        return None if _match_lines(quoted, real) else _diff("\n".join(quoted), output)
    real_exc = normalise(exc["text"]).splitlines()
    # The quote may start with what the block printed before it raised.
    printed = output.splitlines()
    if printed and quoted[: len(printed)] == printed:
        quoted = quoted[len(printed):]
    if not quoted:
        return _diff(quote, exc["text"])
    head, real_head = _EXCEPTION_HEADER.match(quoted[0]), _EXCEPTION_HEADER.match(real_exc[0])
    if not head or not real_head or (head["name"] != real_head["name"]
                                     and not _exception_name_agrees(head["name"], exc)):
        return _diff("\n".join(quoted), "\n".join(real_exc))
    quoted = [real_head["name"] + head["rest"]] + quoted[1:]
    if _match_lines(quoted, real_exc):
        return None
    return _diff("\n".join(quoted), "\n".join(real_exc))


def _statement_lines(code: str) -> list[tuple[int, int]]:
    """(first, last) line of every simple statement of a block."""
    spans = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def _arrow_quotes(code: str) -> list[tuple[int, int, str]]:
    """(line of the quote, line of the code it quotes, quoted text) for every `# →` of a block.

    `print(x)  # → 3` quotes its own line. A comment line `# → ...` under a statement
    quotes that statement (the last one above it), and the comment lines right below it
    continue the quote: output too long for one line, or a loop's prints."""
    lines = code.splitlines()
    quotes = []
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.lstrip().startswith("#"):
            m = ARROW.match(line.strip())
            if m:
                above = next((j for j in range(k - 1, -1, -1)
                              if lines[j].strip() and not lines[j].lstrip().startswith("#")), None)
                text = [m["value"]]
                while k + 1 < len(lines) and lines[k + 1].lstrip().startswith("#") \
                        and not ARROW.match(lines[k + 1].strip()):
                    k += 1
                    text.append(lines[k].strip().lstrip("#").strip())
                if above is not None:
                    quotes.append((k + 1, above + 1, " ".join(text)))
        else:
            arrow = _comment_arrow(line)
            if arrow is not None:
                quotes.append((k + 1, k + 1, arrow))
        k += 1
    return quotes


def compare_arrows(block: CodeBlock, entry: dict) -> list[str]:
    """One message per `# →` comment of `block` that does not say what its statement printed."""
    problems = []
    spans = _statement_lines(block.code)
    printed = {int(n): text for n, text in entry["lines"].items()}
    for where, number, arrow in _arrow_quotes(block.code):
        quoted = arrow.split(EXPLANATION, 1)[0].rstrip()
        first, last = min(((a, b) for a, b in spans if a <= number <= b), key=lambda s: s[1] - s[0],
                          default=(number, number))
        real = "".join(printed.get(n, "") for n in range(first, last + 1))
        if on_one_line(normalise(quoted)) != on_one_line(normalise(real)):
            problems.append(f"line {where} of the block: `# → {quoted}`, but it printed {real.rstrip()!r}")
    return problems


def _comment_arrow(line: str) -> str | None:
    """The text after `# →` in the comment of a code line (not inside a string)."""
    if "→" not in line:
        return None
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, IndentationError):
        return None
    for token in tokens:
        if token.type == tokenize.COMMENT:
            m = ARROW.match(token.string)
            return m["value"] if m else None
    return None


def quoted_blocks(lesson: LessonText) -> list[tuple[CodeBlock, CodeBlock, int]]:
    """(runnable block, the ```text block after it, the runnable block's index in
    `lesson.code_blocks()`) for every output quote of the lesson."""
    index = {id(b): k for k, b in enumerate(lesson.code_blocks())}
    pairs = []
    segments = lesson.segments
    for before, after in zip(segments, segments[1:]):
        if isinstance(after, CodeBlock) and after.language in QUOTE_LANGUAGES:
            block = before.jax if isinstance(before, SideBySide) else before
            if isinstance(block, CodeBlock) and block.runs:
                pairs.append((block, after, index[id(block)]))
    return pairs


_LOOKS_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Warning|Exception|Exit|Interrupt)\b.*:")


def unchecked_quotes(lesson: LessonText) -> list[CodeBlock]:
    """```text blocks that quote an error or a warning (`NameError: ...`) but follow no
    runnable block, so nothing could check them."""
    checked = {id(quote) for _, quote, _ in quoted_blocks(lesson)}
    return [b for b in lesson.code_blocks()
            if b.language in QUOTE_LANGUAGES and id(b) not in checked
            and _LOOKS_RAISED.match(b.code.lstrip().splitlines()[0] if b.code.strip() else "")]


def compare_lesson(lesson: LessonText, report: list[dict]) -> list[str]:
    """Every quote of `lesson` that differs from the run `report` (indexed like the
    lesson's code blocks), as one message each."""
    by_index = {entry["index"]: entry for entry in report}
    blocks = lesson.code_blocks()
    problems = [f"line {b.line}: an error or warning quoted after no block that could print it; "
                "put the block that does right before it" for b in unchecked_quotes(lesson)]
    for block, quote, k in quoted_blocks(lesson):
        entry = by_index.get(k)
        if entry is None or not entry["ok"]:
            continue  # a block that failed is reported by the run itself
        why = compare_quote(quote.code, entry)
        if why:
            problems.append(f"line {quote.line}: {why}")
    for k, block in enumerate(blocks):
        entry = by_index.get(k)
        if not block.runs or entry is None or not entry["ok"]:
            continue
        problems += [f"block at line {block.line}, {p}" for p in compare_arrows(block, entry)]
    return problems


_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e]")


def _tokens_and_comments(code: str) -> tuple[list[tuple[int, str, int]], list[tuple[int, str]]]:
    """The tokens of a block without its comments ((type, text, line) each), and its
    comments ((line, text) each)."""
    import io
    import tokenize

    tokens, comments = [], []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            comments.append((token.start[0], token.string))
        else:
            tokens.append((token.type, token.string, token.start[0]))
    return tokens, comments


def translated_code_differs(english: str, translated: str) -> str | None:
    """None if the Python block `translated` is the block `english` with only some of
    its explanatory comments translated, else why not.

    The code is compared token by token with the comments left out, line numbers
    included (the quotes are matched to the English run by line). Every output quote
    (`# → value` and the comment lines continuing it, tests/lesson_output.py) is the
    same, and a comment either is in Japanese or is the English comment unchanged, so
    a value comment such as `# [0. 1. 2.]` or `# float32` cannot drift."""
    import tokenize

    try:
        en_tokens, en_comments = _tokens_and_comments(english)
        ja_tokens, ja_comments = _tokens_and_comments(translated)
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        return f"does not tokenize: {exc}"
    if [t[:2] for t in en_tokens] != [t[:2] for t in ja_tokens]:
        return "the code differs (comments left out)"
    if en_tokens != ja_tokens:
        return "the code is on different lines"
    if _quoted_only(english) != _quoted_only(translated):
        return "a `# →` output quote differs"
    if [line for line, _ in en_comments] != [line for line, _ in ja_comments]:
        return "the comments are on different lines"
    for (line, en), (_, ja) in zip(en_comments, ja_comments):
        if ARROW.match(en) or ARROW.match(ja):
            # The quoted output stays as printed; only its explanation after ` — ` may be translated.
            (en, en_why), (ja, ja_why) = _explained(en), _explained(ja)
            if ja != en or (en_why is None) != (ja_why is None):
                return f"line {line}: the output comment {en!r} changed"
            if ja_why != en_why and not _JAPANESE.search(ja_why):
                return f"line {line}: the explanation {ja_why!r} is neither the English {en_why!r} nor Japanese"
        elif ja != en and not _JAPANESE.search(ja):
            return f"line {line}: the comment {ja!r} is neither the English {en!r} nor Japanese"
    return None


def _explained(comment: str) -> tuple[str, str | None]:
    """An output comment split into its quote and the explanation after ` — ` (None without one)."""
    quote, sep, why = comment.partition(EXPLANATION)
    return quote.rstrip(), (why if sep else None)


def _quoted_only(code: str) -> list[tuple[int, int, str]]:
    return [(where, line, text.split(EXPLANATION, 1)[0].rstrip()) for where, line, text in _arrow_quotes(code)]
