"""Make the README's screenshots of the course app (SVG, as Textual saves them).

    .venv/bin/python docs/screenshots.py

Runs the real app headless on the real course with a throw-away workspace and
progress file, so your own exercises and progress are never touched.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


async def main() -> None:
    from course.tui.app import JaxlingsApp
    from course.tui.pilot import settle

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        shutil.copytree(ROOT / "exercises", ws / "exercises")
        os.environ.update(JAXLINGS_COURSE_ROOT=str(ROOT), JAXLINGS_WORKSPACE=str(ws),
                          JAXLINGS_PROGRESS=str(ws / "progress.json"))

        app = JaxlingsApp()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, 0.3)
            app.save_screenshot("screenshot-map.svg", str(DOCS))

        app = JaxlingsApp()
        async with app.run_test(size=(150, 40)) as pilot:
            await settle(pilot, 0.3)
            app.open_lesson("arrays")
            await settle(pilot, 0.3)
            lesson = app.screen
            # Scroll to the first side-by-side pair.
            pairs = lesson.query("CodePair")
            if pairs:
                pairs.first().scroll_visible(top=True, animate=False)
            await settle(pilot, 0.3)
            app.save_screenshot("screenshot-lesson.svg", str(DOCS))
    print(f"wrote {DOCS / 'screenshot-map.svg'} and {DOCS / 'screenshot-lesson.svg'}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    asyncio.run(main())
