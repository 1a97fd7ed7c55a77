"""The language switched while the app runs: every screen says its words again in
the new language, the lesson opens in its other edition, nothing the learner typed
is lost, and the choice is saved in the workspace's .jaxlings/ for the next start."""

from __future__ import annotations

import json
import re

import pytest
from rich.cells import cell_len
from textual.widgets import Markdown
from textual.widgets._footer import FooterKey

from course import i18n
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.help import HelpScreen
from course.tui.screens.language import LanguageScreen
from course.tui.screens.lesson import LessonScreen
from course.tui.screens.map import MapScreen

from .conftest import wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

FAILED = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("test_scale", "failed", "wrong_result", "no")])


def footer_words(app) -> set[str]:
    return {key.description for key in app.screen.query(FooterKey) if key.description}


def lesson_text(app) -> str:
    return "\n".join(m.source for m in app.screen.query("#lesson-body Markdown").results(Markdown))


def saved_language(workspace) -> str:
    return json.loads((workspace / ".jaxlings" / "settings.json").read_text(encoding="utf-8"))["language"]


async def choose(pilot, key: str) -> None:
    """F2, then the language below (down) or above (up) the current one."""
    await pilot.press("f2")
    await settle(pilot)
    assert isinstance(pilot.app.screen, LanguageScreen)
    await pilot.press(key, "enter")
    await settle(pilot)


async def test_switching_to_japanese_and_back_while_reading_a_lesson(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.open_lesson("arrays")
        await settle(pilot)
        assert "looks like a `torch.Tensor`" in lesson_text(app)
        assert {"Map", "Exercise", "Contents"} <= footer_words(app)

        await choose(pilot, "down")
        assert i18n.language() == "ja"
        assert saved_language(workspace) == "ja"
        assert isinstance(app.screen, LessonScreen)
        await wait_until(pilot, lambda: "とよく似ています" in lesson_text(app))
        assert "looks like" not in lesson_text(app)
        # The code is the same code, now beside Japanese prose and a Japanese contents list.
        assert app.screen.query_one("#lesson-toc").option_count == 4
        await wait_until(pilot, lambda: {"マップ", "演習", "目次"} <= footer_words(app))
        assert app.sub_title == "app test course"  # the course's own title, which has no Japanese edition

        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        help_text = app.screen.query_one(Markdown).source
        assert "### どこでも" in help_text and "**ヘルプ**: すべての画面の、すべてのキー" in help_text
        await pilot.press("escape")
        await settle(pilot)

        await choose(pilot, "up")
        assert i18n.language() == "en"
        assert saved_language(workspace) == "en"
        await wait_until(pilot, lambda: "looks like a `torch.Tensor`" in lesson_text(app))
        await wait_until(pilot, lambda: {"Map", "Exercise", "Contents"} <= footer_words(app))
        assert not footer_words(app) & {"マップ", "演習", "目次"}


async def test_a_switch_keeps_unsaved_edits_and_says_the_exercise_in_japanese(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen.editor.insert("# mine\n", (0, 0))
        edited = screen.editor.text
        assert screen.dirty()

        app.switch_language("ja")
        await settle(pilot)
        assert screen.editor.text == edited and screen.dirty()
        status = str(screen.query_one("#exercise-status").render())
        assert "未保存" in status and "未合格" in status
        tabs = screen.query_one("#exercise-info")
        assert [str(tabs.get_tab(p).label) for p in ("tab-task", "tab-results", "tab-hints")] == ["課題", "結果", "ヒント"]
        results = str(screen.query_one("#results").render())
        assert re.search(r"✗ 1 件のチェックのうち 1 件が失敗: [^\n.]+。\n", results)  # the headline's words come from the CLI catalog
        await wait_until(pilot, lambda: {"チェック", "ヒント"} <= footer_words(app))
        assert (workspace / "exercises/01_arrays/scale.py").read_text(encoding="utf-8") != edited


async def test_the_app_opens_in_the_language_chosen_before_it_starts(workspace):
    # What `jaxlings --lang ja` does before it runs the app.
    i18n.set_language("ja")
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
        assert {"次の演習", "トレーニング ラボ"} <= footer_words(app)
        assert "演習 3 個中 0 個完了" in str(app.screen.query_one("#map-count").render())
    # Starting in Japanese is not choosing it: nothing is written until the learner switches.
    assert not (workspace / ".jaxlings" / "settings.json").exists()


def test_lab_columns_measure_headings_in_cells_and_wrap_them_only_when_short_of_room():
    from course.tui.screens.lab import COLUMNS, column_widths

    figures = [figure for _label, figure in COLUMNS]
    english = [label for label, _figure in COLUMNS]
    japanese = ["バリアント", "コンパイル", "ms/epoch", "全体", "×NNX eager", "×PyTorch", "正解率"]
    # 80 columns leave the table 76 cells; each of 7 columns pads one cell each side.
    assert column_widths(english, figures, 76) == ([15, 7, 8, 8, 10, 8, 5], 1)
    widths, lines = column_widths(japanese, figures, 76)
    assert widths[1] == cell_len("コンパイル") == 10 and widths[-1] == cell_len("正解率") == 6
    assert lines == 2 and widths[4] == 7 and sum(widths) + 14 <= 76  # "×NNX eager" on two lines
    assert column_widths(japanese, figures, 146) == ([15, 10, 8, 8, 10, 8, 6], 1)


async def test_the_lab_left_running_in_the_background_comes_back_in_the_new_language(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.open_lab()
        await settle(pilot)
        lab = app.screen
        lab.query_one("#lab-epochs").value = "40"
        await pilot.press("r")
        await settle(pilot)
        assert "faster" in str(lab.query_one("#lab-headline").render())
        assert "JAX on CPU (1 device: cpu)" in str(lab.query_one("#lab-hardware").render())
        # Each row is named as in the table; the ladder says in words what each variant is.
        assert "nnx_jit" in [str(label.render()) for label in lab.query(".variant-label")]
        assert "The variants, one line each:" in str(lab.query_one("#lab-ladder").render())
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)

        app.switch_language("ja")
        await settle(pilot)
        app.open_lab()
        await settle(pilot)
        assert app.screen is lab
        assert "高速" in str(lab.query_one("#lab-headline").render())
        headings = [str(column.label) for column in lab.query_one("#lab-table").columns.values()]
        assert headings[0] == "バリアント" and "×NNX eager" in headings
        assert str(lab.query_one("#lab-run").label) == "実行"
        hardware = str(lab.query_one("#lab-hardware").render())
        assert "JAX は CPU (デバイス 1 台: cpu)、PyTorch は cpu、CPU コア 2 個" in hardware and "JAX on" not in hardware
        assert "nnx_jit" in [str(label.render()) for label in lab.query(".variant-label")]
        ladder = str(lab.query_one("#lab-ladder").render())
        assert "バリアント (1 行に 1 つ):" in ladder and "one line each" not in ladder
        await wait_until(pilot, lambda: {"マップ", "JSON 保存"} <= footer_words(app))


async def test_the_command_palette_offers_the_language_setting(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Language"].callback()
        await settle(pilot)
        assert isinstance(app.screen, LanguageScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen) and i18n.language() == "en"
        app.switch_language("ja")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"言語", "テーマ", "スクリーンショット"} <= titles  # Textual's own commands too
        await pilot.press("ctrl+p")
        await settle(pilot)
        from textual.command import CommandInput

        assert app.screen.query_one(CommandInput).placeholder == "レッスン、演習、コマンドを検索…"


def test_text_is_as_narrow_as_its_widest_unbreakable_unit():
    from textual.content import Content

    from course.tui.measure import minimal_width

    for english in ["Ctrl+R, F5", "Save+check: Write the file and run the checks", "  a\tbb\nccc  ", "x"]:
        assert minimal_width(english) == max(len(word) for word in english.split())
        assert Content(english).get_minimal_width(None) == minimal_width(english)
    # Japanese breaks between characters, but never before 、。」 nor after 「.
    assert minimal_width("模範解答を表示します") == 2
    assert minimal_width("コードの差分") == cell_len("コー") == 4  # the long-vowel mark stays with its kana
    assert minimal_width("「保存」を選んだとき、") == cell_len("「保") == 4
    assert Content("保存して実行します").get_minimal_width(None) == 2


async def test_the_help_key_column_keeps_its_keys_whole_beside_japanese(workspace):
    i18n.set_language("ja")
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        cells = [c for c in app.screen.query("MarkdownTableCellContents") if c.render().plain.startswith("Ctrl+R,")]
        assert cells and all(c.content_region.width >= len("Ctrl+R,") for c in cells)


async def test_a_choice_that_cannot_be_saved_still_switches_and_says_so(workspace):
    class ReadOnlyWorkspace(FakeLabServices):
        def save_language(self, lang: str) -> None:
            raise PermissionError(13, "Permission denied", str(workspace / ".jaxlings" / "settings.json"))

    app = JaxlingsApp(ReadOnlyWorkspace(check_result=FAILED))
    notes = []
    async with app.run_test() as pilot:
        await settle(pilot)
        app.notify = lambda message, **kw: notes.append((message, kw.get("title")))
        await choose(pilot, "down")
        assert i18n.language() == "ja"
        await wait_until(pilot, lambda: {"次の演習", "トレーニング ラボ"} <= footer_words(app))
        assert notes == [("言語の設定は次回に引き継がれません: Permission denied", "設定を保存できませんでした")]
    assert not (workspace / ".jaxlings" / "settings.json").exists()
