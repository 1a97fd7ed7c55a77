"""What the last check said: each check's outcome in words and symbols, not colour alone."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from course.i18n import N_, _
from course.tui.widgets.wrap import HangingText

PASS = "✓"
FAIL = "✗"
SKIP = "–"
# A check's outcome as the runner reports it, in words for the results panel.
OUTCOMES = {"passed": N_("passed"), "failed": N_("failed"), "skipped": N_("skipped"), "error": N_("error")}


def _mark(outcome: str) -> tuple[str, str]:
    outcome = (outcome or "").lower()
    if outcome in ("passed", "pass", "ok"):
        return PASS, "$success"
    if outcome in ("skipped", "skip"):
        return SKIP, "$text-muted"
    return FAIL, "$error"


def result_content(result: Any, failure_line: int | None = None) -> Content:
    checks = list(result.checks or [])
    failed = [c for c in checks if _mark(c.outcome)[0] == FAIL]
    parts: list[Content] = []
    if result.passed:
        parts.append(
            Content.from_markup(
                f"[b $success]{PASS} " + _("Passed") + "[/]: " + _(
                    "all {count} checks. "
                    "Outside the editor (Esc): [b]s[/b] the solution as a diff, [b]n[/b] what comes next."
                ).format(count=len(checks))
            )
        )
    else:
        head = (_("{failed} of {total} checks failed").format(failed=len(failed), total=len(checks)) if checks
                else getattr(result, "headline", None) or _("Not passed"))
        from course.engine.results import HEADLINES  # here, not at start-up: the runner brings NumPy

        # The sentence in the language in use (Japanese ends it with 。); the headline stays first, in bold.
        sentence = _("{head}: {cause}.") if result.cause else _("{head}.")
        rest = sentence.replace("{head}", "", 1).format(cause=_(HEADLINES.get(result.cause, result.cause or "")))
        parts.append(Content.from_markup(f"[b $error]{FAIL} $head[/]$rest", head=head, rest=rest))
        if result.message and not failed:
            parts.append(Content(str(result.message).rstrip()))
    if failure_line is not None:
        parts.append(
            Content.from_markup(
                f"[b][@click=screen.jump_to_line({int(failure_line)})]→ "
                + _("Go to line {line}").format(line=int(failure_line))
                + "[/][/b] [dim]" + _("(click it, or g outside the editor)") + "[/dim]"
            )
        )
    for check in checks:
        mark, style = _mark(check.outcome)
        outcome = _(OUTCOMES.get(check.outcome, check.outcome))
        parts.append(Content.from_markup(f"[{style}]{mark}[/] [b]$name[/] [dim]$outcome[/]",
                                         name=check.name, outcome=outcome))
        if mark == FAIL and check.message:
            indented = "\n".join("    " + line for line in str(check.message).rstrip().splitlines())
            parts.append(Content(indented))
    output = str(getattr(result, "output", "") or "").rstrip()
    if output:
        parts.append(Content.from_markup("[b]" + _("Your code printed:") + "[/b]"))
        parts.append(Content("\n".join("    " + line for line in output.splitlines()[-12:])))
    if result.seed is not None:
        parts.append(Content.from_markup("[dim]" + _("Random inputs from seed $seed.") + "[/]", seed=str(result.seed)))
    return Content("\n").join(parts)


class ResultsView(Static):
    """The results panel. Attributes down: the screen sets `show_*`."""

    def show_idle(self, watching: str) -> None:
        self.update(
            Content.from_markup(
                _("No check run yet. Edit the file, then [b]Ctrl+S[/b] to save and check.") + " $watching",
                watching=watching,
            )
        )

    def show_running(self, budget: float | None = None, landed: tuple | list = ()) -> None:
        """The check is running; `landed` are the outcomes of the tests that have finished, as they
        land: each with its mark, the first failure with its message at once."""
        limit = " " + _("It may take up to {seconds} s; the status line counts the seconds.").format(
            seconds=f"{budget:g}") if budget else ""
        parts = [Content.from_markup(_("[b]… Checking[/b] your code in a separate Python process.") + "$limit",
                                     limit=limit)]
        told_failure = False
        for check in landed:
            mark, style = _mark(check.outcome)
            outcome = _(OUTCOMES.get(check.outcome, check.outcome))
            parts.append(Content.from_markup(f"[{style}]{mark}[/] [b]$name[/] [dim]$outcome[/]",
                                             name=check.name, outcome=outcome))
            if mark == FAIL and check.message and not told_failure:
                told_failure = True
                parts.append(Content("\n".join("    " + line for line in str(check.message).rstrip().splitlines())))
        if landed:
            parts.append(Content.from_markup("[dim]" + _("{done} done; the rest is still running.").format(
                done=len(landed)) + "[/]"))
        self.update(HangingText(Content("\n").join(parts)))

    def show_result(self, result: Any, failure_line: int | None = None) -> None:
        # A wrapped message line stays under its own indentation (Textual's wrap starts at column 0).
        self.update(HangingText(result_content(result, failure_line)))
