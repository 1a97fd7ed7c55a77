"""`python -I -m course`: the same as the `jaxlings` script.

Without -I, `-m` puts the current folder first on sys.path. Graders run this as
root from folders others can write (a class folder, /tmp): a planted `json.py`
or `numpy.py` there would run as the grader. The folder is dropped here before
anything else is imported, unless it is the checkout this package comes from.
A folder holding a `course/` package of its own is beyond that: Python finds
its package, not this one, and runs its `__main__`. Hence -I, or the script.
"""

import os
import sys

_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CWD = os.getcwd()
sys.path[:] = [p for p in sys.path
               if os.path.abspath(p or _CWD) != _CWD or os.path.abspath(p or _CWD) == _CHECKOUT]

from course.cli import main  # noqa: E402 - only once the path is safe

raise SystemExit(main())
