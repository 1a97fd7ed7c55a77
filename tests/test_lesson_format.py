"""The lesson Markdown convention: what the app shows side by side, what the tests run."""

from course.lessons import CodeBlock, Prose, SideBySide, parse_lesson

LESSON = """# Arrays

Some prose.

```python torch
import torch
x = torch.zeros(3)
```

```python jax
import jax.numpy as jnp
x = jnp.zeros(3)
```

## A pitfall

```python raises=TypeError
x[0] = 1.0
```

```text
TypeError: JAX arrays are immutable
```

```python norun
train_forever()
```

```python torch
y = x + 1
```
"""


def test_torch_then_jax_fences_form_one_side_by_side_pair():
    lesson = parse_lesson(LESSON)
    pairs = [s for s in lesson.segments if isinstance(s, SideBySide)]
    assert len(pairs) == 1
    assert "torch.zeros" in pairs[0].torch.code and "jnp.zeros" in pairs[0].jax.code
    assert pairs[0].torch.framework == "torch" and pairs[0].jax.framework == "jax"


def test_titles_headings_and_flags():
    lesson = parse_lesson(LESSON)
    assert lesson.title == "Arrays"
    assert (2, "A pitfall") in lesson.headings
    blocks = lesson.code_blocks()
    raising = [b for b in blocks if b.raises]
    assert [b.raises for b in raising] == ["TypeError"]
    assert raising[0].framework == "jax" and raising[0].runs
    norun = [b for b in blocks if b.code.startswith("train_forever")]
    assert norun and not norun[0].runs
    text = [b for b in blocks if b.language == "text"]
    assert text and not text[0].runs and text[0].framework == ""


def test_a_torch_block_without_a_jax_partner_stands_alone():
    lesson = parse_lesson(LESSON)
    last = lesson.segments[-1]
    assert isinstance(last, CodeBlock) and last.framework == "torch"


def test_line_numbers_point_at_the_opening_fence():
    lesson = parse_lesson(LESSON)
    lines = LESSON.splitlines()
    for block in lesson.code_blocks():
        assert lines[block.line - 1].lstrip().startswith("```")


def test_unclosed_fence_does_not_swallow_or_crash():
    lesson = parse_lesson("# T\n\ntext\n\n```python\nx = 1\n")
    assert isinstance(lesson.segments[0], Prose)
    assert lesson.code_blocks()[0].code == "x = 1\n"


def test_tilde_fences_and_longer_backtick_fences_are_code():
    lesson = parse_lesson("# T\n\n~~~python\na = 1\n~~~\n\n````python\nb = '```'\n````\n")
    codes = [b.code for b in lesson.code_blocks()]
    assert codes == ["a = 1\n", "b = '```'\n"]


# What a lesson quotes as output (tests/lesson_output.py), on report entries shaped
# like course/lesson_run.py's.
from lesson_output import compare_arrows, compare_lesson, compare_quote, normalise  # noqa: E402


def _raised(text, name, qualname, output=""):
    return {"index": 0, "ok": True, "output": output, "lines": {},
            "exception": {"name": name, "qualname": qualname, "text": text}}


def test_line_numbers_temporary_paths_and_addresses_are_normalised_nothing_else():
    real = ("TypeError: bad <function f at 0x7f3a2c1b4e00> at 03_pure_functions.md:194:1\n"
            "ValueError: Destination /tmp/tmpk1zqhv0w/model exists, line 12  \n")
    quoted = ("TypeError: bad <function f at 0x7f00deadbeef> at 03_pure_functions.md:172:1\n"
              "ValueError: Destination /tmp/tmpabc123/model exists, line 3\n")
    assert normalise(real) == normalise(quoted)
    assert normalise(real) != normalise(quoted.replace("exists", "is there"))
    assert normalise("0.5") != normalise("0.6") and normalise("x:12") == "x:12"


def test_an_exception_quote_must_say_what_was_raised():
    entry = _raised("FloatingPointError: invalid value (nan) encountered in sqrt",
                    "FloatingPointError", "builtins.FloatingPointError")
    assert compare_quote("FloatingPointError: invalid value (nan) encountered in sqrt\n", entry) is None
    why = compare_quote("FloatingPointError: invalid value (nan) encountered in log\n", entry)
    assert why and "in log" in why and "in sqrt" in why
    assert compare_quote("ValueError: invalid value (nan) encountered in sqrt\n", entry)


def test_a_public_path_of_the_exception_class_is_its_name():
    # json.JSONDecodeError is defined in json.decoder, as jax.errors' classes are in jax._src.
    entry = _raised("json.decoder.JSONDecodeError: bad", "JSONDecodeError", "json.decoder.JSONDecodeError")
    assert compare_quote("json.JSONDecodeError: bad\n", entry) is None
    assert compare_quote("JSONDecodeError: bad\n", entry) is None
    assert compare_quote("json.decoder.JSONDecodeError: bad\n", entry) is None
    assert compare_quote("json.ValueError: bad\n", entry)
    assert compare_quote("no.such.module.JSONDecodeError: bad\n", entry)


def test_a_line_of_dots_stands_for_lines_left_out_and_only_for_whole_lines():
    entry = _raised("ValueError: first\nmiddle 1\nmiddle 2\nlast", "ValueError", "builtins.ValueError")
    assert compare_quote("ValueError: first\n...\nlast\n", entry) is None
    assert compare_quote("ValueError: first\n...\nmiddle 2\nlast\n", entry) is None
    assert compare_quote("ValueError: first\nmiddle 1\n...\nmiddle 2\nlast\n", entry)  # ... is 1+ lines
    assert compare_quote("ValueError: fi...\nmiddle 1\nmiddle 2\nlast\n", entry)
    assert compare_quote("ValueError: first\n...\n", entry) is None  # the rest left out
    assert compare_quote("ValueError: first\nmiddle 1\nmiddle 2\nlast\n...\n", entry)


def test_a_quote_after_a_block_that_does_not_raise_is_all_it_printed():
    entry = {"index": 0, "ok": True, "exception": None, "lines": {},
             "output": "float32\nUserWarning: narrowed\n"}
    assert compare_quote("float32\nUserWarning: narrowed\n", entry) is None
    assert compare_quote("UserWarning: narrowed\n", entry)


def test_arrow_comments_quote_what_their_statement_printed():
    block = parse_lesson("```python\nprint(1)  # → 1 — one\nx = [2,\n     3]; print(x)  # → [2, 3]\n"
                         "print('# → not a comment')\nprint(5)  # 5, not checked\n"
                         "print([[1], [2]])  # → [[1] [2]]\n```\n").code_blocks()[0]
    printed = {"1": "1\n", "3": "[2, 3]\n", "4": "# → not a comment\n", "5": "5\n", "6": "[[1],\n [2]]\n"}
    entry = {"index": 0, "ok": True, "exception": None, "output": "", "lines": printed}
    assert compare_arrows(block, entry) == ["line 6 of the block: `# → [[1] [2]]`, but it printed '[[1],\\n [2]]'"]
    printed["6"] = "[[1]\n [2]]\n"
    assert compare_arrows(block, entry) == []
    printed["1"] = "1.0\n"
    assert len(compare_arrows(block, entry)) == 1


def test_quotes_are_matched_to_the_block_before_them():
    lesson = parse_lesson("# T\n\n```python torch\nprint(1)\n```\n\n```python jax\nprint(2)\n```\n\n"
                          "```text\n2\n```\n\nprose\n\n```text\nnot after a block\n```\n")
    report = [{"index": 0, "ok": True, "exception": None, "output": "1\n", "lines": {}},
              {"index": 1, "ok": True, "exception": None, "output": "2\n", "lines": {}}]
    assert compare_lesson(lesson, report) == []
    report[1]["output"] = "3\n"
    assert len(compare_lesson(lesson, report)) == 1


def test_an_error_quoted_after_prose_is_refused_console_text_is_not():
    lesson = parse_lesson("# T\n\n```python\nx = 1\n```\n\nIt warns:\n\n```text\nUserWarning: narrowed\n```\n\n"
                          "```console\n$ jaxlings train\n```\n")
    report = [{"index": 0, "ok": True, "exception": None, "output": "", "lines": {}}]
    problems = compare_lesson(lesson, report)
    assert len(problems) == 1 and problems[0].startswith("line 9: an error or warning quoted after no block")


def test_an_arrow_on_its_own_line_quotes_the_statement_above_and_continues_below():
    block = parse_lesson("```python\nfor p in (1, 2):\n    print(p, [p] * 2)\n# → 1 [1, 1]\n#   2 [2, 2]\n"
                         "x = 3\n```\n").code_blocks()[0]
    entry = {"index": 0, "ok": True, "exception": None, "output": "", "lines": {"2": "1 [1, 1]\n2 [2, 2]\n"}}
    assert compare_arrows(block, entry) == []
    entry["lines"]["2"] = "1 [1, 1]\n2 [2, 3]\n"
    assert compare_arrows(block, entry) == ["line 4 of the block: `# → 1 [1, 1] 2 [2, 2]`, but it printed '1 [1, 1]\\n2 [2, 3]'"]
