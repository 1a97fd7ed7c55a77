"""What the last check said: each check's outcome in words and symbols, not colour alone."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

PASS = "✓"
FAIL = "✗"
SKIP = "–"


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
                f"[b $success]{PASS} Passed[/]: all {len(checks)} checks. "
                "Outside the editor (Esc): [b]s[/b] the solution as a diff, [b]n[/b] the next exercise."
            )
        )
    else:
        head = f"{len(failed)} of {len(checks)} checks failed" if checks else getattr(result, "headline", "Not passed")
        from course.engine.runner import HEADLINES  # here, not at start-up: the runner brings NumPy

        cause = f": {HEADLINES.get(result.cause, result.cause)}" if result.cause else ""
        parts.append(Content.from_markup(f"[b $error]{FAIL} {head}[/]$cause.", cause=cause))
        if result.message and not failed:
            parts.append(Content(str(result.message).rstrip()))
    if failure_line is not None:
        parts.append(
            Content.from_markup(
                f"[b][@click=screen.jump_to_line({int(failure_line)})]→ Go to line {int(failure_line)}[/][/b] "
                "[dim](click it, or g outside the editor)[/dim]"
            )
        )
    for check in checks:
        mark, style = _mark(check.outcome)
        parts.append(Content.from_markup(f"[{style}]{mark}[/] [b]$name[/] [dim]$outcome[/]", name=check.name, outcome=check.outcome))
        if mark == FAIL and check.message:
            indented = "\n".join("    " + line for line in str(check.message).rstrip().splitlines())
            parts.append(Content(indented))
    output = str(getattr(result, "output", "") or "").rstrip()
    if output:
        parts.append(Content.from_markup("[b]Your code printed:[/b]"))
        parts.append(Content("\n".join("    " + line for line in output.splitlines()[-12:])))
    if result.seed is not None:
        parts.append(Content.from_markup("[dim]Random inputs from seed $seed.[/]", seed=str(result.seed)))
    return Content("\n").join(parts)


class ResultsView(Static):
    """The results panel. Attributes down: the screen sets `show_*`."""

    def show_idle(self, watching: str) -> None:
        self.update(
            Content.from_markup(
                "No check run yet. Edit the file, then [b]Ctrl+S[/b] to save and check. "
                f"{watching}"
            )
        )

    def show_running(self, budget: float | None = None) -> None:
        limit = f" It may take up to {budget:g} s; the status line counts the seconds." if budget else ""
        self.update(Content.from_markup("[b]… Checking[/b] your code in a separate Python process.$limit", limit=limit))

    def show_result(self, result: Any, failure_line: int | None = None) -> None:
        self.update(result_content(result, failure_line))
