"""Lesson texts: Markdown with a small convention for PyTorch/JAX code pairs.

A lesson is plain Markdown that reads well in any viewer. Code fences carry
words after the language that say how the course treats them:

    ```python torch          PyTorch code: the left panel of a side-by-side pair
    ```python jax            JAX / Flax / Optax code: the right panel
    ```python                JAX code shown on its own (run in the JAX namespace)
    ```python raises=Name    JAX code that must raise the exception class `Name`
                             (a pitfall shown with the error JAX prints)
    ```python warns=Name     code that shows the warning class `Name` on purpose
    ```python norun          shown only, never run (pseudo-code, shell-dependent)
    ```text / ```console     output or error text, never run; right after a
                             runnable block, it quotes what that block printed
                             (tests/lesson_output.py compares the two)

A `# → value` comment on a line of code quotes what that line prints (text after
` — ` explains it); the tests compare it with the real output too.

A `torch` fence followed directly (blank lines allowed) by a `jax` fence is one
side-by-side pair. `torch` may also be combined with `raises=` or `norun`.

For the code-run test, each lesson's `torch` blocks run in order in one
namespace, and its `jax`/plain blocks run in order in another, so later blocks
may use names defined earlier in the same lesson.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE_RE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


@dataclass(frozen=True)
class CodeBlock:
    language: str
    code: str
    framework: str  # "torch", "jax" or "" (not Python, or no framework)
    runs: bool
    raises: str | None
    line: int  # 1-based line of the opening fence in the lesson file
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prose:
    text: str


@dataclass(frozen=True)
class SideBySide:
    torch: CodeBlock
    jax: CodeBlock


Segment = Prose | CodeBlock | SideBySide


@dataclass
class LessonText:
    title: str
    segments: list[Segment] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text)

    def code_blocks(self) -> list[CodeBlock]:
        blocks: list[CodeBlock] = []
        for seg in self.segments:
            if isinstance(seg, CodeBlock):
                blocks.append(seg)
            elif isinstance(seg, SideBySide):
                blocks.extend((seg.torch, seg.jax))
        return blocks


def _parse_info(info: str, line: int, code: str) -> CodeBlock:
    words = tuple(info.split())
    language = words[0].lower() if words else ""
    flags = set(w.lower() for w in words[1:])
    raises = None
    for w in words[1:]:
        if w.lower().startswith("raises="):
            raises = w.split("=", 1)[1]
    framework = ""
    if language == "python":
        framework = "torch" if "torch" in flags else "jax"
    runs = language == "python" and "norun" not in flags
    return CodeBlock(language, code, framework, runs, raises, line, words)


def parse_lesson(text: str) -> LessonText:
    """Split a lesson into prose, single code blocks and side-by-side pairs."""
    lines = text.splitlines()
    raw: list[Prose | CodeBlock] = []
    prose: list[str] = []
    title = ""
    headings: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            h = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", lines[i])
            if h:
                headings.append((len(h.group(1)), h.group(2)))
                if not title and len(h.group(1)) == 1:
                    title = h.group(2)
            prose.append(lines[i])
            i += 1
            continue
        fence = m.group("fence")
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = lines[i].strip()
            if close.startswith(fence[0] * len(fence)) and set(close) == {fence[0]}:
                break
            body.append(lines[i])
            i += 1
        i += 1  # past the closing fence (or the end of an unclosed block)
        if prose:
            raw.append(Prose("\n".join(prose)))
            prose = []
        raw.append(_parse_info(m.group("info").strip(), start + 1, "\n".join(body) + "\n"))
    if prose:
        raw.append(Prose("\n".join(prose)))

    segments: list[Segment] = []
    k = 0
    while k < len(raw):
        seg = raw[k]
        if isinstance(seg, CodeBlock) and seg.framework == "torch":
            j = k + 1
            if j < len(raw) and isinstance(raw[j], Prose) and not raw[j].text.strip():
                j += 1
            nxt = raw[j] if j < len(raw) else None
            if isinstance(nxt, CodeBlock) and "jax" in (w.lower() for w in nxt.words[1:]):
                segments.append(SideBySide(seg, nxt))
                k = j + 1
                continue
        if isinstance(seg, Prose) and not seg.text.strip():
            k += 1
            continue
        segments.append(seg)
        k += 1
    return LessonText(title=title, segments=segments, headings=headings)


def load_lesson(path: Path) -> LessonText:
    return parse_lesson(Path(path).read_text(encoding="utf-8"))
