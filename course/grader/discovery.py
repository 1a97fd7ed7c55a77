"""Finding submissions in a class folder and the exercise files inside each one.

A class folder holds one entry per learner: a folder or an archive. Learners
hand in what they hand in, so files are matched sensibly rather than strictly:
`exercises/<file>` where the course puts it, else the same relative path one or
more folders down, else the same file name anywhere (the shallowest wins).
Where a file was found is recorded so an instructor can see any guess made.
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from course.grader.archives import archive_stem

MAX_DEPTH = 32
MAX_FILES = 5000
MAX_FOLDERS = 2000
_IGNORED_DIRS = {"__MACOSX", "__pycache__", ".git", ".venv", "node_modules", ".ipynb_checkpoints"}


class DiscoveryError(Exception):
    """The class folder cannot be read; the message says why."""


# Hand-ins jaxlings recognises but cannot grade: each is still a learner, shown in
# the gradebook with status "unsupported" and a note saying what to ask for.
UNSUPPORTED = {
    ".7z": "a 7-Zip archive", ".rar": "a RAR archive", ".zst": "a Zstandard file", ".gz": "a gzip file",
    ".bz2": "a bzip2 file", ".xz": "an xz file", ".lz": "an lzip file", ".lzma": "an LZMA file",
    ".cab": "a cabinet archive", ".arj": "an ARJ archive", ".py": "a loose Python file",
    ".ipynb": "a Jupyter notebook",
}


@dataclass(frozen=True)
class Submission:
    id: str  # safe as a file name, unique within the class
    source: Path  # the learner's folder or archive, never written to
    problem: str | None = None  # why it cannot be graded (an unsupported format), else None

    @property
    def is_archive(self) -> bool:
        return self.source.is_file()


@dataclass(frozen=True)
class Located:
    path: Path
    relative: str  # where it was found, relative to the submission's root
    note: str | None  # set when the file was not where the course puts it


def safe_id(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]+", "_", name).strip("._")
    return cleaned or "submission"


def discover(class_dir: Path) -> tuple[list[Submission], list[str]]:
    """The submissions in `class_dir`, sorted by id, and notes on entries left out."""
    if not class_dir.is_dir():
        raise DiscoveryError(f"{class_dir} is not a folder")
    submissions: list[Submission] = []
    ignored: list[str] = []
    taken: set[str] = set()
    for entry in sorted(class_dir.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            # Reported, never dropped in silence: it may be a learner's hand-in (".anna").
            ignored.append(f"{entry.name} (its name starts with '.': rename it to grade it)")
            continue
        if entry.name in _IGNORED_DIRS:
            continue
        if entry.is_symlink():
            ignored.append(f"{entry.name} (a link: submissions must be real folders or archives)")
            continue
        problem = None
        if entry.is_dir():
            stem = entry.name
        elif entry.is_file() and archive_stem(entry):
            stem = archive_stem(entry)
        elif entry.is_file() and entry.suffix.lower() in UNSUPPORTED:
            stem = entry.name[: -len(entry.suffix)] or entry.name
            problem = (f"{entry.name} is {UNSUPPORTED[entry.suffix.lower()]}; jaxlings grades a folder or a "
                       ".zip/.tar(.gz/.bz2/.xz) archive holding the exercises/ files")
        else:
            ignored.append(f"{entry.name} (neither a folder nor a .zip/.tar archive)")
            continue
        ident = base = safe_id(stem)
        n = 2
        while ident in taken:
            ident = f"{base}-{n}"
            n += 1
        taken.add(ident)
        submissions.append(Submission(ident, entry, problem))
    return submissions, ignored


@dataclass
class Scan:
    files: list[Path]
    stopped: str | None  # why the search did not see everything, if it did not


def scan_files(root: Path) -> Scan:
    """Regular files under `root`, shallowest first, links never followed, junk folders skipped.

    Breadth first and bounded by files and folders seen as well as by depth, so
    a deeply nested hand-in is found and a hostile tree cannot keep it busy.
    """
    found: list[Path] = []
    queue = collections.deque([(root, 0)])
    folders, stopped = 0, None
    while queue:
        folder, depth = queue.popleft()
        folders += 1
        if folders > MAX_FOLDERS:
            stopped = f"more than {MAX_FOLDERS} folders"
            break
        try:
            entries = sorted(folder.iterdir(), key=lambda p: os.fsencode(p.name))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name in _IGNORED_DIRS:
                    continue
                if depth < MAX_DEPTH:
                    queue.append((entry, depth + 1))
                elif stopped is None:
                    stopped = f"folders more than {MAX_DEPTH} levels deep were not searched"
            elif entry.is_file():
                found.append(entry)
                if len(found) >= MAX_FILES:
                    return Scan(found, f"more than {MAX_FILES} files")
    return Scan(found, stopped)


def regular_files(root: Path) -> list[Path]:
    return scan_files(root).files


def locate(root: Path, expected: dict[str, str], files: list[Path] | None = None) -> dict[str, Located]:
    """Map exercise name -> the learner's file for it, for each one found.

    `expected` maps exercise name -> path relative to `exercises/`.
    """
    files = regular_files(root) if files is None else files
    rels = {f: PurePosixPath(f.relative_to(root).as_posix()) for f in files}
    out: dict[str, Located] = {}
    for name, rel_text in expected.items():
        want = PurePosixPath(rel_text)
        canonical = PurePosixPath("exercises") / want
        best: tuple[tuple[int, int, str], Path] | None = None
        for f, rel in rels.items():
            if rel.name != want.name:
                continue
            if rel == canonical:
                rank = 0
            elif rel.parts[-len(canonical.parts):] == canonical.parts:
                rank = 1  # the exercises/ folder nested some folders down
            elif rel.parts[-len(want.parts):] == want.parts:
                rank = 2  # the lesson folder without exercises/
            else:
                rank = 3  # same file name somewhere
            key = (rank, len(rel.parts), rel.as_posix())
            if best is None or key < best[0]:
                best = (key, f)
        if best is not None:
            rank, _, shown = best[0]
            note = None if rank == 0 else f"found at {shown} (expected {canonical.as_posix()})"
            out[name] = Located(best[1], shown, note)
    return out


def fingerprint(paths: list[Path], root: Path) -> str:
    """A digest of file names and contents: a changed submission is regraded on resume."""
    h = hashlib.sha256()
    # File names are bytes on POSIX and need not be UTF-8: hash them as bytes.
    for p in sorted(paths, key=lambda q: os.fsencode(q.relative_to(root).as_posix())):
        h.update(os.fsencode(p.relative_to(root).as_posix()) + b"\0")
        try:
            with open(p, "rb") as f:  # streamed: a large data file is not read into memory
                h.update(hashlib.file_digest(f, "sha256").digest())
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()


def source_fingerprint(sub: Submission) -> str:
    if sub.is_archive:
        return fingerprint([sub.source], sub.source.parent)
    return fingerprint(regular_files(sub.source), sub.source)
