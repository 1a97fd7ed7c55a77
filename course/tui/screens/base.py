"""What every screen of the app shares."""

from __future__ import annotations

from textual import on
from textual.screen import Screen
from textual.worker import Worker, WorkerState


class CourseScreen(Screen):
    # Worker.StateChanged does not bubble, so each screen hands its failed
    # workers to the app's one error reporter.
    @on(Worker.StateChanged)
    def _hand_failure_to_app(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.app.report_worker_error(event.worker)
