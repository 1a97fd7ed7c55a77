"""An exercise's statement (its starter's docstring) as Markdown for the Task pane.

Statements are written as plain text laid out for a terminal: a PyTorch snippet
indented under the line that introduces it ("PyTorch equivalent:"), numbered items
whose first line is a signature and whose next lines describe it. Markdown would
read that snippet as more words of the paragraph above it and run the lines of an
item together, so the layout is made explicit here: the snippet becomes a fenced
code block, and a line of an item that starts a new sentence starts a new line."""

from __future__ import annotations

import re

ITEM = re.compile(r"^(\s*)(\d+[.)]|[-*+])\s+")
# An item's next line starts a line of its own after the end of a sentence, or after the item's
# first line when that is a signature (`relu(x) -> jax.Array`).
_SENTENCE_ENDS = (".", ":", "。", "：")
_SIGNATURE = re.compile(r"^`[^`]+`$")
_STARTS = re.compile(r"[A-Z`(\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
FENCE = "```"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def statement_markdown(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    content = 0  # where the text of the current paragraph or list item starts
    in_item = False
    first_of_item = False
    in_fence = False
    previous = ""  # the last line of text (not code) that was not blank
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(FENCE):
            in_fence = not in_fence
            out.append(line)
            i += 1
            continue
        if in_fence:
            out.append(line)
            i += 1
            continue
        if not stripped:
            out.append(line)
            previous = ""
            i += 1
            continue
        indent = _indent(line)
        if previous.rstrip().endswith((":", "：")) and indent >= content + 4:
            # Code introduced by the line above: every line from here that is indented at
            # least as deep (blank lines inside it included) is code.
            block: list[str] = []
            j = i
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) >= indent):
                block.append(lines[j])
                j += 1
            while block and not block[-1].strip():
                block.pop()
                j -= 1
            pad = " " * content
            out.extend(["", pad + FENCE + "python", *(pad + l[indent:] for l in block), pad + FENCE, ""])
            previous = ""
            i = j
            continue
        item = ITEM.match(line)
        if item:
            in_item, first_of_item = True, True
            content = len(item.group(0))
            out.append(line)
            previous = line
            i += 1
            continue
        ends = previous.rstrip().endswith(_SENTENCE_ENDS) or (
            first_of_item and _SIGNATURE.match(previous[content:].strip()) is not None)
        first_of_item = False
        if indent == 0:
            in_item = False
            content = 0
        elif in_item and previous and ends and _STARTS.match(stripped):
            # The item's next sentence (its description after a signature, "PyTorch: …"):
            # a hard line break, at the item's own indentation.
            out[-1] = out[-1].rstrip() + "\\"
            line = " " * min(indent, content) + stripped
        out.append(line)
        previous = line
        i += 1
    return "\n".join(out)
