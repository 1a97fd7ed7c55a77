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
