"""Line breaks for Japanese (and other CJK) text in Rich and Textual.

Both libraries wrap text at spaces only: their word patterns (`rich._wrap.re_word`,
`textual._wrap.re_chunk`) take a run of non-space characters as one unbreakable word.
Japanese puts no spaces between words, so a whole clause becomes one "word": a
paragraph wraps early and raggedly, and a table cell narrower than the clause cuts it
off with an ellipsis.

`install()` swaps those patterns for ones in which every CJK character is a word of its
own, with the line-breaking rules Japanese typesetting uses (kinsoku): closing
punctuation (、。」) and small kana never start a line, opening brackets (「) never end
one. Text without CJK characters is split exactly as before, so English layout is
unchanged (a test holds both to it).
"""

from __future__ import annotations

import re
import sys

# Hiragana, katakana, CJK symbols and punctuation, ideographs, full-width forms.
CJK = "\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff60"
# What may not start a line: closing brackets and punctuation, small kana, the long-vowel mark.
CLOSE = "、。，．・：；？！）」』】〕〉》］｝〙〗ゝゞーァィゥェォッャュョヮヵヶぁぃぅぇぉっゃゅょゎ…‥"
# What may not end a line: opening brackets.
OPEN = "「『（【〔〈《［｛〘〖"

_UNIT = rf"[{OPEN}]*(?:[{CJK}]|[^\s{CJK}]+)[{CLOSE}]*"

RICH_WORD = re.compile(rf"\s*{_UNIT}\s*")  # rich: a word and the spaces around it
TEXTUAL_CHUNK = re.compile(rf"{_UNIT}\s*|\s+")  # textual: a word and its trailing spaces, or spaces


def install(textual: bool = False) -> None:
    """Let Rich (and, if asked, Textual) break lines between CJK characters."""
    import rich._wrap

    rich._wrap.re_word = RICH_WORD
    if textual or "textual" in sys.modules:
        import textual._wrap

        textual._wrap.re_chunk = TEXTUAL_CHUNK
