"""How each screen looks, at fixed sizes, with no clock, timing or blinking cursor on it.

Review changes with the HTML report before `--snapshot-update`; Textual is
pinned because its releases change rendering.
"""

from __future__ import annotations

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle

from .conftest import no_blink
from .fakes import FakeLabServices, FakeOutcome, FakeResult

FAILED = FakeResult(
    "scale", False, "wrong_result", "",
    [FakeOutcome("test_scale_matches_reference", "failed", "wrong_result",
                 "scale(x of shape (3, 3), 1.412): expected 2.412 at [0, 0], got 1.412")],
)


def app() -> JaxlingsApp:
    jaxlings = JaxlingsApp(FakeLabServices(check_result=FAILED))
    # The tab underline slides when the Results tab opens; a still frame needs no animation.
    jaxlings.animation_level = "none"
    return jaxlings


def test_course_map(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


def test_lesson_side_by_side_with_contents(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lesson("arrays")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(130, 36), run_before=ready)


def test_lesson_stacked_at_80_columns(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lesson("arrays")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


def test_exercise_with_a_failed_check(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_exercise("scale")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        no_blink(pilot.app)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


def test_reset_confirmation(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_exercise("scale")
        await settle(pilot)
        no_blink(pilot.app)
        await pilot.press("r")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


def test_training_lab_results(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lab()
        await settle(pilot)
        lab = pilot.app.screen
        lab.query_one("#lab-epochs").value = "40"
        no_blink(pilot.app)
        lab.query_one("#lab-variants").focus()
        await pilot.press("r")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(110, 40), run_before=ready)


def test_training_lab_results_at_80_columns(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lab()
        await settle(pilot)
        lab = pilot.app.screen
        lab.query_one("#lab-epochs").value = "40"
        no_blink(pilot.app)
        await pilot.press("r")
        await settle(pilot)
        lab.query_one("#lab-out").scroll_to_widget(lab.query_one("#lab-table"), top=True, animate=False)
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


def test_training_lab_setup_at_80_columns(workspace, snap_compare):
    # Every variant's checkbox shows its whole name, and the ladder under the headline is their key.
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lab()
        await settle(pilot)
        no_blink(pilot.app)
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


def test_help(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)


PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale_matches_reference", "passed")])


def test_solution_as_a_diff_after_a_pass(workspace, snap_compare):
    (workspace / "exercises/01_arrays/scale.py").write_text(
        '"""Scale an array."""\nimport jax.numpy as jnp\n\n\ndef scale(x, alpha):\n    y = x * alpha\n    return y + 1\n'
    )

    async def ready(pilot):
        pilot.app.services.check_result = PASSED
        await settle(pilot)
        pilot.app.open_exercise("scale")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()
        no_blink(pilot.app)

    assert snap_compare(app(), terminal_size=(110, 30), run_before=ready)
