"""The Japanese edition stays in step with the English one.

- every lesson has `lessons/ja/<same file>`, with the same code blocks (fences included)
  in the same order, and the same heading structure: a Python block is the English one
  with its explanatory comments translated (the code token by token, the `# →` output
  quotes and any comment left in English unchanged: tests/lesson_output.py); any
  other block (output, shell, text) is the English one byte for byte;
- every message the code and the course content hand to gettext has a Japanese
  translation: none missing, empty or fuzzy; the catalogs compile;
- the language is chosen by --lang, JAXLINGS_LANG, the saved setting, the locale, in that order.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course import i18n
from course.catalog import load_catalog
from course.lessons import FENCE_RE
from lesson_output import translated_code_differs

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
LESSON_FILES = sorted(p.name for p in LESSONS.glob("[0-9][0-9]_*.md"))


def fenced_blocks(text: str) -> list[str]:
    """Every fenced block, opening and closing fence lines included, exactly as written."""
    blocks: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i].rstrip("\n"))
        if m:
            fence = m["fence"]
            j = i + 1
            while j < len(lines) and not re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[j].rstrip("\n")):
                j += 1
            blocks.append("".join(lines[i:j + 1]))
            i = j + 1
        else:
            i += 1
    return blocks


def block_differs(english: str, translated: str) -> str | None:
    """None if the fenced block `translated` (fences included) may stand for `english`
    in the Japanese edition, else why not. A ```python block may have its comments
    translated; every other block is the same byte for byte."""
    if english == translated:
        return None
    en_fence, _, en_code = english.partition("\n")
    ja_fence, _, ja_code = translated.partition("\n")
    info = FENCE_RE.match(en_fence)["info"].split()
    if en_fence != ja_fence or not info or info[0].lower() != "python":
        return "not the same byte for byte"
    # Drop the closing fence line, the same on both sides once the fences agree.
    en_body, ja_body = en_code.rpartition(en_fence.strip()[0] * 3)[0], ja_code.rpartition(ja_fence.strip()[0] * 3)[0]
    return translated_code_differs(en_body, ja_body)


def heading_levels(text: str) -> list[int]:
    """The levels of the Markdown headings outside code blocks, in order."""
    levels = []
    inside = None
    for line in text.splitlines():
        m = FENCE_RE.match(line)
        if m and inside is None:
            inside = m["fence"][0]
            continue
        if inside is not None:
            if line.strip().startswith(inside * 3):
                inside = None
            continue
        h = re.match(r"^(#{1,6})\s", line)
        if h:
            levels.append(len(h[1]))
    return levels


def test_the_course_manifest_and_the_lesson_files_agree():
    catalog = load_catalog(ROOT)
    assert sorted(lesson.file for lesson in catalog.lessons) == LESSON_FILES


@pytest.mark.parametrize("name", LESSON_FILES)
def test_japanese_lesson_has_the_same_code_blocks_and_headings(name):
    english = (LESSONS / name).read_text(encoding="utf-8")
    ja_path = LESSONS / "ja" / name
    assert ja_path.is_file(), f"lessons/ja/{name} is missing: every lesson has a Japanese edition"
    japanese = ja_path.read_text(encoding="utf-8")
    en_blocks, ja_blocks = fenced_blocks(english), fenced_blocks(japanese)
    assert len(ja_blocks) == len(en_blocks), f"lessons/ja/{name}: {len(ja_blocks)} code blocks, English has {len(en_blocks)}"
    for k, (en, ja) in enumerate(zip(en_blocks, ja_blocks), 1):
        why = block_differs(en, ja)
        assert why is None, f"lessons/ja/{name}: code block {k} differs from the English one ({why}):\n{en}\n---\n{ja}"
    assert heading_levels(japanese) == heading_levels(english), f"lessons/ja/{name}: the headings differ in structure"
    prose = re.sub("|".join(map(re.escape, ja_blocks)) or "$^", "", japanese)
    assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", prose), f"lessons/ja/{name}: the prose is not in Japanese"


def test_fenced_blocks_sees_a_changed_character():
    text = "# T\n\n```python\nx = 1\n```\n\nprose\n\n~~~text\nout\n~~~\n"
    assert fenced_blocks(text) == ["```python\nx = 1\n```\n", "~~~text\nout\n~~~\n"]
    assert fenced_blocks(text) != fenced_blocks(text.replace("x = 1", "x = 2"))


PLAIN = "```python\nx = f(1)  # returns one value\nprint(x)  # → 2\n```\n"
EXPLAINED = "```python\nprint(x)  # → 2 — twice the input\n```\n"


@pytest.mark.parametrize(("english", "translated", "why"), [
    (PLAIN, "```python\nx = f(1)  # 値を 1 つ返す\nprint(x)  # → 2\n```\n", None),
    (PLAIN, "```python\nx = f(2)  # 値を 1 つ返す\nprint(x)  # → 2\n```\n", "the code differs"),
    (PLAIN, "```python\nx = f(1)  # returns one value\nprint(x)  # → 3\n```\n", "output quote differs"),
    (PLAIN, "```python\nx = f(1)  # returns a value\nprint(x)  # → 2\n```\n", "neither the English"),
    (PLAIN, "```python\nx = f(1)\n# 値を 1 つ返す\nprint(x)  # → 2\n```\n", "the code "),
    (PLAIN, "```python\nx = f(1)  # returns one value\nprint(x)  # → 2 — 二\n```\n", "the output comment"),
    (PLAIN, "```python\nx = f(1)  # returns one value\nprint(x)  #→ 2\n```\n", "the output comment"),
    (PLAIN, "```python jax\nx = f(1)  # returns one value\nprint(x)  # → 2\n```\n", "byte for byte"),
    # Only the explanation after ` — ` of an output quote may be translated.
    (EXPLAINED, "```python\nprint(x)  # → 2 — 2 倍の値\n```\n", None),
    (EXPLAINED, "```python\nprint(x)  # → 2 — twice the input\n```\n", None),
    (EXPLAINED, "```python\nprint(x)  # → 2 — double the input\n```\n", "neither the English"),
    (EXPLAINED, "```python\nprint(x)  # → 3 — 2 倍の値\n```\n", "output quote differs"),
    (EXPLAINED, "```python\nprint(x)  # → 2\n```\n", "the output comment"),
    (EXPLAINED, "```python\nprint(x)  # → 2 —2 倍の値\n```\n", "output quote differs"),
])
def test_a_translated_block_may_differ_from_the_english_only_in_its_comments(english, translated, why):
    result = block_differs(english, translated)
    if why is None:
        assert result is None
    else:
        assert result is not None and why in result, result
    text_block = "```text\n# the output\n```\n"
    assert block_differs(text_block, text_block.replace("the output", "出力")) == "not the same byte for byte"
    assert heading_levels("# a\n```\n# not a heading\n```\n## b\n") == [1, 2]


def _extracted(domain: str) -> set[str]:
    from babel.messages.extract import extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    cfg = ROOT / {i18n.DOMAIN: "babel-ui.cfg", i18n.APP: "babel-app.cfg", i18n.CONTENT: "babel-content.cfg"}[domain]
    with cfg.open() as f:
        method_map, options_map = parse_mapping_cfg(f)
    keywords = {"_": None, "N_": None, "ngettext": (1, 2), "gettext": None}
    ids = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
            ROOT, method_map, options_map, keywords=keywords):
        ids.add(message if isinstance(message, str) else message[0])
    return ids


def _catalog(lang: str, domain: str):
    from babel.messages.pofile import read_po

    with i18n.po_path(lang, domain).open("rb") as f:
        return read_po(f, locale=lang, domain=domain)


@pytest.mark.parametrize("domain", i18n.DOMAINS)
def test_every_message_has_a_japanese_translation(domain):
    extracted = _extracted(domain)
    assert extracted, f"nothing marked for translation in {domain}"
    catalog = _catalog("ja", domain)
    translated = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog
                  if m.id and not m.fuzzy and all(m.string if isinstance(m.string, (list, tuple)) else [m.string])}
    missing = sorted(extracted - translated)
    assert not missing, (f"{len(missing)} message(s) of {domain} have no Japanese translation "
                         f"(run `make catalogs`, then translate course/locale/ja/LC_MESSAGES/{domain}.po):\n"
                         + "\n".join(repr(m[:100]) for m in missing[:20]))
    assert i18n.missing_translations("ja", domain) == []


@pytest.mark.parametrize("domain", i18n.DOMAINS)
def test_the_catalogs_compile(domain, tmp_path):
    import gettext

    mo = i18n.compile_catalog("ja", domain, tmp_path / f"{domain}.mo")
    with mo.open("rb") as f:
        translations = gettext.GNUTranslations(f)
    assert translations.info()["language"] == "ja"


def test_language_is_chosen_by_flag_then_env_then_setting_then_locale(tmp_path):
    state = tmp_path / ".jaxlings"
    assert i18n.resolve_language(None, {}, state) == "en"
    assert i18n.resolve_language(None, {"LANG": "ja_JP.UTF-8"}, state) == "ja"
    assert i18n.resolve_language(None, {"LANG": "ja_JP.UTF-8", "LC_ALL": "C.UTF-8"}, state) == "en"
    i18n.save_language("en", state)
    assert i18n.resolve_language(None, {"LANG": "ja_JP.UTF-8"}, state) == "en"  # the saved choice beats the locale
    assert i18n.resolve_language(None, {"JAXLINGS_LANG": "ja"}, state) == "ja"
    assert i18n.resolve_language("en", {"JAXLINGS_LANG": "ja"}, state) == "en"


def test_a_corrupt_settings_file_is_ignored_and_rewritten_only_on_a_choice(tmp_path):
    state = tmp_path / ".jaxlings"
    state.mkdir()
    (state / "settings.json").write_bytes(b"\xff\xfe{not json")
    assert i18n.saved_language(state) is None
    assert i18n.resolve_language(None, {}, state) == "en"
    assert (state / "settings.json").read_bytes() == b"\xff\xfe{not json"
    i18n.save_language("ja", state)
    assert i18n.saved_language(state) == "ja"


def test_set_language_switches_gettext_and_back():
    msgid = next(iter(sorted(_extracted(i18n.CONTENT))))
    try:
        i18n.set_language("ja")
        assert i18n.language() == "ja"
        assert i18n.content(msgid) != msgid
    finally:
        i18n.set_language("en")
    assert i18n.content(msgid) == msgid


@pytest.mark.parametrize("domain", i18n.DOMAINS)
def test_the_catalogs_pass_the_checks_make_runs(domain):
    """`make` compiles with `pybabel compile`, which refuses a catalog whose entries fail Babel's
    checks (e.g. "62% of" reads as a `% o` placeholder the translation lacks): CI would stop there."""
    catalog = _catalog("ja", domain)
    problems = [(message.lineno, str(errors[0])) for message, errors in catalog.check() if errors]
    assert not problems, f"{domain}.po entries that `pybabel compile` refuses: {problems[:5]}"


@pytest.mark.parametrize("domain", i18n.DOMAINS)
def test_no_japanese_message_puts_a_space_after_a_full_stop(domain):
    """Japanese puts no space after 。, not even where markup closes after it (`完了です。[/] `);
    a run of spaces that lines up a column of a task statement's table is not one."""
    spaced = re.compile(r"。(\[/[^\]]*\])* (?=\S)")
    found = [m.id for m in _catalog("ja", domain) if m.id and any(
        spaced.search(s) for s in (m.string if isinstance(m.string, (list, tuple)) else [m.string]))]
    assert not found, found[:5]


def test_join_sentences_puts_a_space_after_english_and_none_after_japanese():
    assert i18n.join_sentences("[green]Done.[/] Next.", "More.") == "[green]Done.[/] Next. More."
    assert i18n.join_sentences("[green]完了です。[/]", "次へ。") == "[green]完了です。[/]次へ。"
    assert i18n.join_sentences("完了です。", "") == "完了です。"
