"""`jaxlings` with no command in a terminal that cannot draw the app points to the CLI."""

from __future__ import annotations

import io

import pytest

from course.tui import launch


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("term", ["dumb", ""])
def test_a_dumb_terminal_gets_the_commands_instead_of_the_app(monkeypatch, capsys, term):
    import course.tui.app

    monkeypatch.setenv("TERM", term)
    monkeypatch.setattr("sys.stdin", Terminal())
    monkeypatch.setattr("sys.stdout", Terminal())

    def no_app(*args, **kwargs):
        raise AssertionError("the full-screen app started in a dumb terminal")

    monkeypatch.setattr(course.tui.app, "JaxlingsApp", no_app)
    assert launch.run_app() == 2
    err = capsys.readouterr().err
    assert "cannot draw the course app" in err and "jaxlings check" in err and "jaxlings list" in err
