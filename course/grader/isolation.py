"""The grader's isolation is the engine's: `course.engine.isolation` (one sandbox for
`check`, the app and `grade`). Re-exported for code that imports it from here."""

from course.engine.isolation import (  # noqa: F401
    GUARANTEES,
    TIERS,
    Isolation,
    IsolationError,
    choose,
)
