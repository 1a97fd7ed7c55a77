"""The Japanese edition says each thing one way: docs/glossary-ja.md names the term to
write for each concept and the variants to avoid, and no Japanese text uses a variant.

Japanese text is the prose of lessons/ja/*.md and the Japanese comments of their Python
blocks, every msgstr of course/locale/ja/LC_MESSAGES/*.po, and the Japanese lines of
README.md. Not searched, because they are not Japanese text: inline code, fenced blocks
other than their Japanese comments, the code lines indented under a task statement,
URLs, and quoted English (a library's error text, a page title in 「」).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from course.lessons import FENCE_RE

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "docs" / "glossary-ja.md"
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
AVOID_HEADER = "避ける表記"


@dataclass(frozen=True)
class Entry:
    concept: str
    chosen: str
    avoid: tuple[str, ...]


def parse_glossary(text: str) -> list[Entry]:
    """The rows of the glossary's table: its concept, the chosen term and the variants
    in backticks in the 避ける表記 column."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("|") and AVOID_HEADER in line)
    columns = [c.strip() for c in lines[header].strip().strip("|").split("|")]
    avoid_at = columns.index(AVOID_HEADER)
    entries = []
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == len(columns), f"docs/glossary-ja.md: a row with {len(cells)} cells: {line}"
        entries.append(Entry(cells[0], cells[1], tuple(re.findall(r"`([^`]+)`", cells[avoid_at]))))
    return entries


def variant_pattern(variant: str) -> re.Pattern:
    """A variant of ASCII letters only matches as a whole word; any other, as written."""
    if re.fullmatch(r"[A-Za-z]+", variant):
        return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(variant)}(?![A-Za-z0-9_])")
    return re.compile(re.escape(variant))


_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_URL = re.compile(r"https?://\S+")
_QUOTED_ENGLISH = re.compile(r"\"[^\"\n]*\"|「[^」\n]*」|'[^'\n]*'")


def japanese_text(text: str) -> str:
    """`text` without what is not Japanese text in it: inline code, URLs, and quoted
    English ("...", 「...」 or '...' with no Japanese inside)."""
    text = _INLINE_CODE.sub(" ", text)
    text = _URL.sub(" ", text)
    return _QUOTED_ENGLISH.sub(lambda m: m[0] if JAPANESE.search(m[0]) else " ", text)


def python_comments(code: str) -> list[tuple[int, str]]:
    """(line, text) of each comment of a Python block that is in Japanese (the English
    ones are output quotes and values, not text of the edition)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError):
        return []
    return [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT and JAPANESE.search(t.string)]


def lesson_texts(text: str) -> list[tuple[int, str]]:
    """(line, Japanese text) of a lesson: prose lines and the Japanese comments of its
    Python blocks."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if m:
            fence, info = m["fence"], m["info"].split()
            j = i + 1
            while j < len(lines) and not re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[j]):
                j += 1
            if info and info[0].lower() == "python":
                out += [(i + 1 + n, japanese_text(c)) for n, c in python_comments("\n".join(lines[i + 1:j]) + "\n")]
            i = j + 1
            continue
        out.append((i + 1, japanese_text(lines[i])))
        i += 1
    return out


def catalog_texts(path: Path) -> list[tuple[int, str]]:
    """(line, Japanese text) of each msgstr of a catalog, without the code lines
    indented under a task statement."""
    with path.open("rb") as f:
        catalog = read_po(f)
    out = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        for string in strings:
            prose = "\n".join(line for line in (string or "").split("\n") if not line.startswith("    "))
            out.append((message.lineno, japanese_text(prose)))
    return out


def readme_texts(text: str) -> list[tuple[int, str]]:
    """(line, Japanese text) of the lines of README.md written in Japanese."""
    out, inside = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if inside:
            if "#" in line and JAPANESE.search(line[line.index("#"):]):
                out.append((n, japanese_text(line[line.index("#"):])))
            continue
        if JAPANESE.search(line):
            out.append((n, japanese_text(line)))
    return out


def japanese_files() -> list[tuple[str, list[tuple[int, str]]]]:
    files = [(f"lessons/ja/{p.name}", lesson_texts(p.read_text(encoding="utf-8")))
             for p in sorted((ROOT / "lessons" / "ja").glob("*.md"))]
    files += [(f"course/locale/ja/LC_MESSAGES/{p.name}", catalog_texts(p))
              for p in sorted((ROOT / "course" / "locale" / "ja" / "LC_MESSAGES").glob("*.po"))]
    files.append(("README.md", readme_texts((ROOT / "README.md").read_text(encoding="utf-8"))))
    return files


def find_variants(entries: list[Entry], texts: list[tuple[int, str]]) -> list[tuple[int, str, Entry]]:
    found = []
    patterns = [(variant_pattern(v), v, e) for e in entries for v in e.avoid]
    for line, text in texts:
        for pattern, variant, entry in patterns:
            if pattern.search(text):
                found.append((line, variant, entry))
    return found


ENTRIES = parse_glossary(GLOSSARY.read_text(encoding="utf-8"))


def test_the_glossary_lists_terms_and_variants_to_avoid():
    assert len(ENTRIES) >= 40
    assert sum(len(e.avoid) for e in ENTRIES) >= 60
    for entry in ENTRIES:
        assert entry.chosen, f"docs/glossary-ja.md: {entry.concept!r} names no term to write"
        for variant in entry.avoid:
            # A variant that the chosen term contains would fail every correct use.
            assert not variant_pattern(variant).search(entry.chosen), (
                f"docs/glossary-ja.md: {entry.concept!r}: the variant {variant!r} is part of {entry.chosen!r}")


@pytest.mark.parametrize("name", [name for name, _ in japanese_files()])
def test_no_japanese_text_uses_a_variant_the_glossary_avoids(name):
    texts = dict(japanese_files())[name]
    assert texts, f"{name}: no Japanese text found"
    found = find_variants(ENTRIES, texts)
    assert not found, f"{name}: variants that docs/glossary-ja.md avoids:\n" + "\n".join(
        f"  line {line}: {variant!r} ({entry.concept}: write {entry.chosen})" for line, variant, entry in found)


def test_the_search_finds_variants_in_prose_and_comments_only():
    entries = [Entry("tracer", "トレーサ", ("トレーサー",)), Entry("lab", "トレーニング ラボ", ("Lab",))]
    lesson = (
        "# 題\n"
        "関数はトレーサーで実行されます。\n"        # 2: prose
        "`トレーサー` と \"Lab error\" と「Lab」\n"   # 3: code span, quoted English
        "**Lab** 画面、Label は別の語\n"           # 4: a whole word; Label is not Lab
        "```python\n"
        "x = 1  # トレーサーを返す\n"               # 6: a Japanese comment
        "y = 2  # → Lab\n"                        # 7: an output quote
        "```\n"
        "```text\n"
        "トレーサー in an error\n"                 # 10: output text
        "```\n"
    )
    found = [(line, variant) for line, variant, _ in find_variants(entries, lesson_texts(lesson))]
    assert found == [(2, "トレーサー"), (4, "Lab"), (6, "トレーサー")]


def test_catalog_search_reads_msgstr_only_and_skips_indented_code(tmp_path):
    po = tmp_path / "x.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "the Titanic data"\nmsgstr "タイタニック号のデータ"\n\n'
        'msgid "Titanic MLP"\nmsgstr "Titanic の MLP"\n\n'
        'msgid "Code:\\n    TitanicDataset()\\n    Titanic = 1"\nmsgstr "コード:\\n    Titanic = 1"\n',
        encoding="utf-8")
    entries = [Entry("Titanic", "タイタニック号", ("Titanic",))]
    found = find_variants(entries, catalog_texts(po))
    assert [line for line, _, _ in found] == [8]


def test_the_glossary_parser_reads_the_avoid_column():
    table = ("| 概念 | 採用する表記 | 記事での表記 | 避ける表記 | 備考 |\n|---|---|---|---|---|\n"
             "| batch size | バッチ サイズ | — | `バッチサイズ`, `batchsize` | `not this` |\n\ntext\n")
    assert parse_glossary(table) == [Entry("batch size", "バッチ サイズ", ("バッチサイズ", "batchsize"))]
