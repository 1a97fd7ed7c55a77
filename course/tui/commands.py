"""Command palette: jump to any lesson, exercise or the training lab."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from course.i18n import _, content


class CourseCommands(Provider):
    def _entries(self) -> list[tuple[str, str, object]]:
        app = self.app
        catalog = getattr(app, "catalog", None)
        entries: list[tuple[str, str, object]] = [
            (_("Training lab"), _("Time PyTorch and JAX training side by side"), app.open_lab),
        ]
        if catalog is None:
            return entries
        progress = app.progress
        for number, lesson in enumerate(catalog.lessons, start=1):
            entries.append(
                (_("Lesson {number}: {title}").format(number=number, title=content(lesson.title)), _("Read the lesson"),
                 partial(app.open_lesson, lesson.name))
            )
            for exercise in lesson.exercises:
                done = progress is not None and progress.is_done(exercise.name)
                mark = _("✓ done") if done else _("pending")
                entries.append(
                    (
                        _("Exercise: {name}").format(name=exercise.name),
                        _("Lesson {number} · {mark}").format(number=number, mark=mark),
                        partial(app.open_exercise, exercise.name),
                    )
                )
        return entries

    async def discover(self) -> Hits:
        for title, help_text, action in self._entries():
            yield DiscoveryHit(title, action, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), action, help=help_text)
