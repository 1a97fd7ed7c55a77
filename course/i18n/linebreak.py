"""Line breaks for Japanese (and other CJK) text in Rich and Textual.

Both libraries wrap text at spaces only: their word patterns (`rich._wrap.re_word`,
`textual._wrap.re_chunk`) take a run of non-space characters as one unbreakable word.
Japanese puts no spaces between words, so a whole clause becomes one "word": a
paragraph wraps early and raggedly, and a table cell narrower than the clause cuts it
off with an ellipsis.

`install()` swaps those patterns for ones in which every CJK character is a word of its
own, with the line-breaking rules Japanese typesetting uses (kinsoku): closing
punctuation (、。」 and an ASCII `)` after Japanese), small kana and iteration marks (々)
never start a line, opening brackets (「 and an ASCII `(` before Japanese) never end one.
Text without CJK characters is split exactly as before, so English layout is unchanged
(a test holds both to it).

For Rich it also mends two places where a line could still break those rules or lose
text: a word too long for any line (a URL followed by 「。」) is folded where the rules
allow rather than at the last cell, and the space after a double-width character that
ends a full line is trimmed by cells, not by characters (Rich trimmed too little, and a
table cell then cut the line's last character off with "…").
"""

from __future__ import annotations

import re
import sys

# Hiragana, katakana, CJK symbols and punctuation, ideographs, full-width forms.
CJK = "\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff60"
# What may not start a line: closing brackets and punctuation, small kana, the long-vowel mark,
# iteration marks; and ASCII closing punctuation, which Japanese text uses beside full-width.
# (In text without CJK characters the ASCII ones are inside a word already: no change there.)
CLOSE = "、。，．・：；？！）」』】〕〉》］｝〙〗ゝゞヽヾ々〻ーァィゥェォッャュョヮヵヶぁぃぅぇぉっゃゅょゎ…‥)]},:;!?"
# What may not end a line: opening brackets, full-width and ASCII.
OPEN = "「『（【〔〈《［｛〘〖([{"

_UNIT = rf"[{re.escape(OPEN)}]*(?:[{CJK}]|[^\s{CJK}]+)[{re.escape(CLOSE)}]*"

RICH_WORD = re.compile(rf"\s*{_UNIT}\s*")  # rich: a word and the spaces around it
TEXTUAL_CHUNK = re.compile(rf"{_UNIT}\s*|\s+")  # textual: a word and its trailing spaces, or spaces


def install(textual: bool = False) -> None:
    """Let Rich (and, if asked, Textual) break lines between CJK characters."""
    import rich._wrap
    import rich.text

    rich._wrap.re_word = RICH_WORD
    rich.text.divide_line = divide_line  # Text.wrap calls it by this name
    rich.text.Text.rstrip_end = _rstrip_end_by_cells
    if textual or "textual" in sys.modules:
        import textual._wrap

        textual._wrap.re_chunk = TEXTUAL_CHUNK


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Where to break `text` into lines of at most `width` cells: Rich's own greedy rule
    (`rich._wrap.divide_line`), word by word, except that a word longer than a line is
    folded by `fold_word`, so the rules above hold inside it too."""
    from rich._wrap import words
    from rich.cells import cell_len

    breaks: list[int] = []
    offset = 0  # cells used on the current line
    for start, _end, word in words(text):
        length = cell_len(word.rstrip())
        if width - offset >= length:
            offset += cell_len(word)
        elif length > width:
            pieces = fold_word(word, width) if fold else [word]
            for k, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if k == len(pieces) - 1:
                    offset = cell_len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = cell_len(word)
    return breaks


def fold_word(word: str, width: int) -> list[str]:
    """`word` cut into pieces of at most `width` cells, the first as long as it may be; a
    piece ends earlier where the next would start with a character of CLOSE or this one
    end with one of OPEN (a long URL followed by 「。」 keeps a character with the 「。」)."""
    from rich.cells import get_character_cell_size

    def may_break(k: int) -> bool:  # between word[k - 1] and word[k]
        return word[k] not in CLOSE and word[k - 1] not in OPEN

    pieces: list[str] = []
    i = 0
    while i < len(word):
        j, used = i, 0
        while j < len(word) and used + get_character_cell_size(word[j]) <= width:
            used += get_character_cell_size(word[j])
            j += 1
        j = max(j, i + 1)  # a character wider than the line still goes somewhere
        if j < len(word) and not may_break(j):
            k = j - 1
            while k > i and not may_break(k):
                k -= 1
            if k > i:  # else nowhere in this piece is allowed: break at the width after all
                j = k
        pieces.append(word[i:j])
        i = j
    return pieces


_TRAILING_SPACE = re.compile(r"\s+$")


def _rstrip_end_by_cells(self, size: int) -> None:  # noqa: ANN001 - replaces rich.text.Text.rstrip_end
    """Remove the whitespace that reaches beyond `size` cells at the end of the text.

    Rich's own measures the text in characters while `size` is in cells, so after a line of
    double-width characters it kept a space beyond the width, and a table cell then cut the
    line with "…" to fit, losing the last character."""
    from rich.cells import cell_len

    excess = cell_len(self.plain) - size
    if excess > 0:
        match = _TRAILING_SPACE.search(self.plain)
        if match is not None:
            self.right_crop(min(len(match.group(0)), excess))  # a space is one cell
