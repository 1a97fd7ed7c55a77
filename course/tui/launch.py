"""Entry point for `jaxlings` with no command: open the course app."""

from __future__ import annotations

import os
import sys


def run_app() -> int:
    """Open the app in the language already chosen (`course.cli` resolves --lang,
    JAXLINGS_LANG, the saved setting and the locale before it calls this)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        from course.i18n import _

        print(
            _("jaxlings: the course app needs an interactive terminal.\n"
              "Without one, use the commands: `jaxlings list`, `jaxlings check`, "
              "`jaxlings --help`."),
            file=sys.stderr,
        )
        return 2
    if os.environ.get("TERM", "").strip().lower() in ("", "dumb"):
        from course.i18n import _

        # A dumb terminal has no cursor movement or colours: the app would draw escape codes as text.
        print(
            _("jaxlings: this terminal (TERM={term}) cannot draw the course app.\n"
              "Use the commands instead: `jaxlings list`, `jaxlings check`, `jaxlings watch`, "
              "`jaxlings --help`; or run jaxlings in a terminal with TERM=xterm-256color.").format(
                term=os.environ.get("TERM", "") or '""'),
            file=sys.stderr,
        )
        return 2
    from course.tui.app import JaxlingsApp

    app = JaxlingsApp()
    try:
        app.run()
    except KeyboardInterrupt:
        return 130
    finally:
        app.services.close()
    return app.return_code or 0
