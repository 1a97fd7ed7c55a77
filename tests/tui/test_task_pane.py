"""The Task pane shows a statement's code as code and its numbered items as a list, at 80×24."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Markdown

from course import i18n
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.statement import statement_markdown

from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
QUIET = FakeResult("x", False, "wrong_result", "", [FakeOutcome("t", "failed", "wrong_result", "no")])


@pytest.fixture
def real_course(tmp_path, monkeypatch) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(REPO / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(REPO))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(ws / "progress.json"))
    yield ws
    i18n.set_language(i18n.DEFAULT)


async def task_pane(pilot, name: str) -> Markdown:
    await settle(pilot)
    pilot.app.open_exercise(name)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExerciseScreen)
    return screen.query_one("#task", Markdown)


@pytest.mark.parametrize("lang", ["en", "ja"])
async def test_the_pytorch_block_of_swap_head_is_a_code_block(real_course, lang):
    i18n.set_language(lang)
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        task = await task_pane(pilot, "swap_head")
        fences = [f for f in task.query("MarkdownFence")]
        assert len(fences) == 1, task.source
        code = fences[0].code
        assert code.splitlines()[0] == "feats = {}"
        assert "opt = torch.optim.Adam(model.head.parameters(), lr=lr)" in code.splitlines()
        # The numbered steps stay a list of four, not words of the paragraph above.
        assert len(task.query("MarkdownOrderedList MarkdownBullet")) == 4


async def test_a_signature_and_its_description_are_separate_lines(real_course):
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        task = await task_pane(pilot, "functional_ops")
        assert len(task.query("MarkdownOrderedList MarkdownBullet")) == 3
        first = task.query("MarkdownOrderedList MarkdownParagraph").first()
        lines = [line.strip() for line in str(first._content).splitlines()]
        assert lines[0] == "relu(x) -> jax.Array"
        assert lines[1].startswith("Element-wise max(x, 0), any shape.")


def test_statement_markdown_keeps_prose_and_fences_code_inside_an_item():
    text = ("Clip it.\n\n1. `global_norm(tree) -> jax.Array`\n   The root of the sum, as a float32\n"
            "   scalar. PyTorch equivalent:\n       torch.sqrt(sum((g ** 2).sum() for g in grads))\n\n"
            "2. `other(x)`\n   Done.\n")
    out = statement_markdown(text)
    assert "   ```python\n   torch.sqrt(sum((g ** 2).sum() for g in grads))\n   ```" in out
    # A wrapped sentence stays one paragraph; the signature line ends with a hard break.
    assert "   The root of the sum, as a float32\n   scalar. PyTorch equivalent:" in out
    assert "1. `global_norm(tree) -> jax.Array`\\\n" in out
    assert statement_markdown("One line.") == "One line."
