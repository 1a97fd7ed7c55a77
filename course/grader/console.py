"""What the instructor sees on the terminal: live progress, then a summary table."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from course.engine.isolation import reason_text
from course.grader import safe
from course.grader.reports import CAUSE_TEXT, fmt_points
from course.i18n import _


class Live:
    """Progress over exercises checked; a context manager around the pool's run."""

    def __init__(self, total_exercises: int, total_submissions: int, quiet: bool) -> None:
        self.console = Console(stderr=True)
        self.quiet = quiet
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[latest]}"), TimeElapsedColumn(),
            console=self.console, disable=quiet, transient=False,
        )
        self.checks = self.progress.add_task(escape(_("exercises")), total=total_exercises, latest="")
        self.subs = self.progress.add_task(escape(_("submissions")), total=total_submissions, latest="")
        # Without a terminal (a batch job's log, a pipe) a bar is never drawn: one line per submission instead.
        self.lines = not quiet and not self.console.is_terminal
        self.done, self.total = 0, total_submissions

    def __enter__(self) -> "Live":
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def event(self, msg: dict) -> None:
        if msg.get("event") == "exercise":
            r = msg["result"]
            mark = _("pass") if r["passed"] else _(CAUSE_TEXT.get(r["cause"], "fail"))
            self.progress.update(self.checks, advance=1, latest=_cell(f"{msg['submission']}/{msg['exercise']}: {mark}"))

    def say(self, text: str) -> None:
        if not self.quiet:
            self.console.print(escape(text), highlight=False)

    def submission_done(self, result: dict, exercises_left: int) -> None:
        self.done += 1
        if self.lines:
            self.console.print(_cell(_("graded {done}/{total}: {id} {points}/{max_points}").format(
                done=self.done, total=self.total, id=result["id"], points=fmt_points(result["total"]),
                max_points=fmt_points(result["max_total"]))),
                               highlight=False, soft_wrap=True)
        # Exercises settled without an `exercise` event (a killed worker) still count.
        self.progress.update(self.checks, advance=exercises_left)
        self.progress.update(self.subs, advance=1,
                             latest=_cell(f"{result['id']}: {fmt_points(result['total'])}/{fmt_points(result['max_total'])}"))


def summary_table(submissions: list[dict], isolation: dict, out_dir, console: Console | None = None,
                  ignored: list[str] = ()) -> None:
    console = console or Console()
    table = Table(title=_("Grades"), show_lines=False)
    table.add_column(_("submission"), no_wrap=True)
    table.add_column(_("score"), justify="right")
    table.add_column(_("passed"), justify="right")
    table.add_column(_("not passed (why)"))
    for sub in safe.clean(submissions):
        exs = sub["exercises"].values()
        passed = sum(e["passed"] for e in exs)
        bad = [f"{e['exercise']} ({_(CAUSE_TEXT.get(e['cause'], e['cause']))})" for e in exs if not e["passed"]]
        shown = ", ".join(bad[:4]) + (_(", +{n} more").format(n=len(bad) - 4) if len(bad) > 4 else "")
        if sub["status"] != "graded":
            shown = f"[{sub['status']}] " + shown
        table.add_row(_cell(sub["id"]), f"{fmt_points(sub['total'])}/{fmt_points(sub['max_total'])}",
                      f"{passed}/{len(sub['exercises'])}", _cell(shown))
    console.print(table)
    g = isolation["guarantees"]
    console.print(_("Isolation in force: [bold]{tier}[/bold] (network off: {network}, solutions hidden: "
                    "{solutions}, other submissions hidden: {others}, unprivileged: {unprivileged})").format(
        tier=escape(isolation["tier"]), network=_yn(g["network_off"]), solutions=_yn(g["solutions_hidden"]),
        others=_yn(g["other_submissions_hidden"]), unprivileged=_yn(g["unprivileged"])))
    pids = isolation.get("pids_cgroup")  # absent from reports written before it was added
    if pids and pids.get("limit"):
        console.print("  " + _("each learner's processes run in a pids cgroup of their own: at most {limit} "
                               "tasks").format(limit=pids["limit"]))
    elif pids and isolation["tier"] in ("bubblewrap", "unshare"):
        console.print("  " + _("no pids cgroup here ({why}): a learner's tasks are limited by RLIMIT_NPROC "
                               "alone").format(why=escape(str(pids.get("why_not", "")))))
    for why in isolation.get("passed_over", []):
        console.print("  " + _("stronger isolation not used: {why}").format(why=escape(reason_text(str(why)))))
    for entry in ignored:
        console.print("  " + _("not a submission, left out: {entry}").format(entry=_cell(entry)))
    console.print(_("Reports in {folder}: report.json, gradebook.csv, junit.xml, feedback/").format(
        folder=escape(str(out_dir))))


def _cell(value) -> str:
    """Learner-controlled text as a table cell: no control characters, no Rich markup."""
    return escape(safe.one_line(value, limit=500))


def _yn(flag: bool) -> str:
    return _("yes") if flag else "[red]" + _("no") + "[/red]"
