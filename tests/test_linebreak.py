"""Japanese text wraps between characters in Rich and Textual, and English wraps as before."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.markdown import Markdown

from course.i18n import linebreak

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL_RICH = re.compile(r"\s*\S+\s*")
ORIGINAL_TEXTUAL = re.compile(r"\S+\s*|\s+")


def _spans(pattern, text, leading_space: bool):
    spans, pos = [], 0
    while (m := pattern.match(text, pos)) is not None and m.end() > pos:
        spans.append(m.group(0))
        pos = m.end()
    return spans


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md")))
def test_english_lessons_split_into_the_same_words_as_before(name):
    text = (ROOT / "lessons" / name).read_text(encoding="utf-8")
    text = re.sub(r"[\u3000-\u30ff\u4e00-\u9fff\uff01-\uff60]", "x", text)  # lesson 1 quotes the article
    assert _spans(linebreak.RICH_WORD, text, True) == _spans(ORIGINAL_RICH, text, True)
    assert _spans(linebreak.TEXTUAL_CHUNK, text, False) == _spans(ORIGINAL_TEXTUAL, text, False)


def test_japanese_breaks_between_characters_but_not_before_closing_punctuation():
    words = _spans(linebreak.RICH_WORD, "「JAX の配列」は、変更できません。", True)
    assert "「JAX " in words and "配" in words and "列」" in words and "は、" in words and "ん。" in words
    assert not any(w.startswith(("、", "。", "」")) for w in words)
    assert not any(w.rstrip().endswith("「") for w in words)


def _render(markdown: str, width: int = 80) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    console.print(Markdown(markdown))
    return console.file.getvalue()


def test_a_japanese_paragraph_fills_its_lines_and_a_table_cell_wraps_instead_of_being_cut(monkeypatch):
    import rich._wrap

    monkeypatch.setattr(rich._wrap, "re_word", rich._wrap.re_word)  # undone after the test
    paragraph = ("PyTorch では、普通の Python の道具でデバッグします。forward の中でテンソルを print したり、"
                 "ブレークポイントを置いたり、異常検出を有効にして NaN がどこで"
                 "生まれたかを突き止めたりします。jax.jit の下では、どれも値を見ることができません。")
    table = ("| 道具 | 何をするか |\n|---|---|\n"
             "| `jax.debug.print` | コンパイルされたプログラムの中で、呼び出すたびに値を表示します。"
             "Python の `print` はトレース時に一度だけ実行されます。 |\n")
    linebreak.install()
    out = _render(paragraph + "\n\n" + table)
    lines = out.splitlines()
    assert all(cell_len(line) <= 80 for line in lines)
    assert "…" not in out  # nothing cut off
    assert "呼び出すたびに値を表示します" in "".join(line.strip(" │┃") for line in lines)
    prose = [line.rstrip() for line in lines if line.strip()]
    assert all(cell_len(line) >= 76 for line in prose[:2]), prose  # lines are filled, not ragged


def test_ascii_brackets_and_iteration_marks_stay_with_their_japanese_neighbours():
    words = _spans(linebreak.RICH_WORD, "計算グラフもありません)。日々のコード (後述) です", True)
    assert "ん)。" in words and "日々" in words and "(後" in words and "述) " in words
    assert not any(w.lstrip().startswith((")", "々", "。")) for w in words), words
    assert not any(w.rstrip().endswith("(") for w in words), words


def test_a_word_longer_than_a_line_is_folded_where_the_rules_allow():
    url = "https://docs.jax.dev/en/latest/faq.html#gradients-contain-nan-where-using-where"
    assert linebreak.fold_word(url + ")。", 80) == [url[:-1], "e)。"]
    assert linebreak.fold_word("a" * 10, 4) == ["aaaa", "aaaa", "aa"]
    assert linebreak.fold_word(")" * 6, 4) == ["))))", "))"]  # nowhere allowed: at the width after all
    assert linebreak.fold_word("あいうえ", 3) == ["あ", "い", "う", "え"]  # a double-width character per line


def test_rich_keeps_the_last_character_of_a_full_japanese_line(monkeypatch):
    import rich._wrap
    import rich.text

    # What install() replaces comes back after the test.
    monkeypatch.setattr(rich.text, "divide_line", rich.text.divide_line)
    monkeypatch.setattr(rich.text.Text, "rstrip_end", rich.text.Text.rstrip_end)
    monkeypatch.setattr(rich._wrap, "re_word", rich._wrap.re_word)
    linebreak.install()
    console = Console(width=80, file=io.StringIO(), color_system=None)
    text = rich.text.Text("バッチごとにコンパイル済みのステップを 1 回: nnx.jit(train_step)")
    # 19 double-width characters fill 38 cells; the space after them must go, not the を.
    lines = [line.plain for line in text.wrap(console, 38, overflow="ellipsis")]
    assert lines == ["バッチごとにコンパイル済みのステップを", "1 回: nnx.jit(train_step)"]
    url = "(see https://docs.jax.dev/en/latest/faq.html#gradients-contain-nan-where-using-where)。"
    lines = [line.plain for line in rich.text.Text(url).wrap(console, 80)]
    assert "".join(lines).replace(" ", "") == url.replace(" ", "")
    assert not any(line.startswith(("。", ")")) for line in lines), lines
