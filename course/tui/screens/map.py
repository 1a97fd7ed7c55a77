"""The course map: every lesson and exercise, what is done, and what is next."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Header, ProgressBar, Static, Tree
from textual.widgets.tree import TreeNode

from course.i18n import N_, _, content
from course.tui.screens.base import CourseScreen
from course.tui.widgets.footer import CourseFooter

DONE = "✓"
PENDING = "○"
NEXT = "→"


@dataclass(frozen=True)
class Entry:
    kind: str  # "lesson" or "exercise"
    name: str


class MapScreen(CourseScreen):
    BINDINGS = [
        Binding("n", "next_exercise", N_("Next exercise"), id="map.next", tooltip=N_("Open the first exercise not done yet")),
        Binding("l", "lab", N_("Training lab"), id="map.lab", tooltip=N_("PyTorch vs JAX, with and without jit")),
    ]

    @dataclass
    class CourseLoaded(Message):
        catalog: Any
        progress: Any
        state: dict

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="map-top"):
            with Horizontal(id="map-summary"):
                yield Static(_("Loading the course…"), id="map-count")
                yield ProgressBar(total=1, show_eta=False, id="map-progress")
            yield Static("", id="map-next")
        tree: Tree[Entry] = Tree("Course", id="map-tree")
        tree.show_root = False
        tree.auto_expand = False
        yield tree
        yield CourseFooter()

    def on_mount(self) -> None:
        self.query_one(Tree).loading = True
        self._load_course()

    @work(thread=True, exclusive=True, exit_on_error=False, description=N_("loading the course"))
    def _load_course(self) -> None:
        services = self.app.services
        catalog = services.load_catalog()
        progress = services.load_progress()
        self.post_message(self.CourseLoaded(catalog, progress, services.load_app_state()))

    def on_map_screen_course_loaded(self, event: CourseLoaded) -> None:
        self.app.catalog = event.catalog
        self.app.sub_title = self.app.course_subtitle()
        self.app.progress = event.progress
        for warning in getattr(event.progress, "warnings", None) or []:
            self.notify(str(warning), title=_("Progress file"), severity="warning", timeout=15)
        self.query_one(Tree).loading = False
        self._build_tree()
        self.focus_next_pending()
        self.app.watch_progress()
        self.app.reopen_last(event.state)

    def on_worker_state_changed(self, event) -> None:
        from textual.worker import WorkerState

        if event.worker.name == "_load_course" and event.state == WorkerState.ERROR:
            from course.tui.errors import describe

            self.query_one(Tree).loading = False
            self.query_one("#map-count", Static).update(
                _("✗ The course could not be loaded. {why}").format(why=describe(event.worker.error))
            )

    def on_screen_resume(self) -> None:
        # Not when the map was only passed through on the way to another screen.
        if self.app.catalog is not None and self.is_current:
            self._build_tree()
            self.focus_next_pending()
            self.app.remember({"screen": "map"})

    def progress_changed(self) -> None:
        """The progress file changed: redraw the marks, the cursor stays where it is."""
        if self.app.catalog is None:
            return
        tree = self.query_one(Tree)
        here = tree.cursor_node.data if tree.cursor_node is not None else None
        self._build_tree()
        for node in [*tree.root.children, *(c for n in tree.root.children for c in n.children)]:
            if node.data == here:
                self.call_after_refresh(tree.move_cursor, node)
                break

    # -- tree -----------------------------------------------------------------
    def _next_pending(self):
        return self.app.progress.next_pending(self.app.catalog)

    def _build_tree(self) -> None:
        catalog, progress = self.app.catalog, self.app.progress
        nxt = self._next_pending()
        next_name = nxt.name if nxt is not None else None
        tree = self.query_one(Tree)
        expanded = {n.data.name for n in tree.root.children if n.is_expanded}
        tree.clear()
        total = done = 0
        next_word, done_word = _("next"), _("done")
        for number, lesson in enumerate(catalog.lessons, start=1):
            names = [e.name for e in lesson.exercises]
            finished = sum(progress.is_done(n) for n in names)
            total += len(names)
            done += finished
            mark = DONE if names and finished == len(names) else " "
            node = tree.root.add(
                f"{mark} {number:>2}. {escape(content(lesson.title))}  [dim]{finished}/{len(names)}[/dim]",
                data=Entry("lesson", lesson.name),
                expand=lesson.name in expanded or next_name in names,
            )
            for exercise in lesson.exercises:
                if exercise.name == next_name:
                    label = f"{NEXT} {exercise.name}  [b]{next_word}[/b]"
                elif progress.is_done(exercise.name):
                    label = f"{DONE} {exercise.name}  [dim]{done_word}[/dim]"
                else:
                    label = f"{PENDING} {exercise.name}"
                node.add_leaf(label, data=Entry("exercise", exercise.name))
        self.query_one("#map-count", Static).update(_("{done} of {total} exercises done").format(done=done, total=total))
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        if nxt is None:
            text = f"{DONE} " + _("Every exercise passes. Well done! Press [b]l[/b] for the training lab.")
        elif self._starts_a_lesson(nxt):
            number, lesson = self._lesson_of(nxt.name)
            text = _("Next: lesson {number}, [b]{title}[/b] — Enter to read it, "
                     "[b]n[/b] to go straight to its exercise {name}.").format(
                number=number, title=escape(content(lesson.title)), name=nxt.name)
        else:
            text = _("Next: [b]{name}[/b] — press [b]n[/b] to open it, Enter to open what the cursor is on.").format(
                name=nxt.name)
        self.query_one("#map-next", Static).update(text)

    def _lesson_of(self, exercise_name: str) -> tuple[int, Any]:
        for number, lesson in enumerate(self.app.catalog.lessons, start=1):
            if any(e.name == exercise_name for e in lesson.exercises):
                return number, lesson
        raise KeyError(exercise_name)

    def _starts_a_lesson(self, exercise: Any) -> bool:
        """The next exercise's lesson was never opened (nor any of its exercises tried): read it first."""
        _number, lesson = self._lesson_of(exercise.name)
        return not self.app.progress.lesson_started(lesson)

    def focus_next_pending(self) -> None:
        """Put the cursor where the learner left off: on the next exercise, or on
        its lesson when that lesson has not been started.

        The tree's lines exist only after the next refresh, so the cursor moves
        then; until it has, the tree has no focus and an Enter cannot open
        whatever the cursor happened to be on before."""
        nxt = self._next_pending()
        tree = self.query_one(Tree)
        self._placing = True
        if self.focused is tree:
            self.set_focus(None)
        target = nxt.name if nxt is not None else None
        if nxt is not None and self._starts_a_lesson(nxt):
            _number, lesson = self._lesson_of(nxt.name)
            for lesson_node in tree.root.children:
                if lesson_node.data.name == lesson.name:
                    self.call_after_refresh(self._move_cursor, lesson_node)
                    return
        for lesson_node in tree.root.children:
            for node in lesson_node.children:
                if node.data.name == target:
                    self.call_after_refresh(self._move_cursor, node)
                    return
        self.call_after_refresh(self._move_cursor, None)

    def _move_cursor(self, node: TreeNode | None) -> None:
        tree = self.query_one(Tree)
        if node is not None:
            tree.move_cursor(node)
            tree.scroll_to_node(node, animate=False)
        self._placing = False
        tree.focus()

    @on(Tree.NodeSelected)
    def _open(self, event: Tree.NodeSelected) -> None:
        entry = event.node.data
        if entry is None or getattr(self, "_placing", False):
            return
        if entry.kind == "lesson":
            self.app.open_lesson(entry.name)
        else:
            self.app.open_exercise(entry.name)

    # -- actions ----------------------------------------------------------------
    def action_next_exercise(self) -> None:
        if self.app.catalog is None:
            return
        nxt = self._next_pending()
        if nxt is None:
            self.notify(_("Every exercise passes. Try the training lab (l)."), title=_("All done"))
        else:
            self.app.open_exercise(nxt.name)

    def action_lab(self) -> None:
        self.app.open_lab()

    def language_changed(self) -> None:
        if self.app.catalog is None:
            self.query_one("#map-count", Static).update(_("Loading the course…"))
        else:
            self.progress_changed()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_exercise" and self.app.catalog is None:
            return None
        return True
