"""Safe extraction of submission archives (.zip, .tar, .tar.gz/.tgz, .tar.bz2, .tar.xz).

An archive comes from a learner, so it is treated as hostile: members with
absolute paths or `..` components are refused, symbolic links and device files
are skipped (a link could point at another submission or at the solutions), a
hard link is kept only as a copy of a member already extracted from the same
archive, and the total size and member count are capped so that a zip bomb
stops early.

Python files are extracted first and the rest smallest first, so a large data
file that does not fit the size limit is left out (with a note) rather than
costing the learner their exercises.
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_MEMBERS = 5000
_CHUNK = 1 << 16


class ArchiveError(Exception):
    """The archive cannot be extracted safely; the message says why."""


@dataclass
class Extraction:
    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)  # "name (why)" for each member left out


def archive_stem(path: Path) -> str | None:
    """The name without its archive suffix, or None when `path` is not an archive."""
    lower = path.name.lower()
    for suffix in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True):
        if lower.endswith(suffix) and len(lower) > len(suffix):
            return path.name[: -len(suffix)]
    return None


def _safe_relative(name: str) -> PurePosixPath | None:
    """The member's path if it stays inside the destination, else None."""
    name = name.replace("\\", "/")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [part for part in p.parts if part not in ("", ".")]
    if not parts or any(part == ".." for part in parts):
        return None
    return PurePosixPath(*parts)


class _Budget:
    def __init__(self, max_bytes: int, max_members: int) -> None:
        self.max_bytes = max_bytes
        self.max_members = max_members
        self.result = Extraction()

    def member(self) -> None:
        if self.result.files >= self.max_members:
            raise ArchiveError(f"more than {self.max_members} files")
        self.result.files += 1

    def fits(self, declared: int) -> bool:
        return self.result.bytes + max(0, declared) <= self.max_bytes

    def copy(self, src, dest: Path) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        # Counting bytes as they are written, not trusting the declared size,
        # is what stops a bomb whose header lies.
        with open(dest, "wb") as out:
            while chunk := src.read(_CHUNK):
                self.result.bytes += len(chunk)
                if self.result.bytes > self.max_bytes:
                    raise ArchiveError(f"more than {self.max_bytes // (1024 * 1024)} MiB once extracted")
                out.write(chunk)


def extract_archive(
    archive: Path, dest: Path, *, max_bytes: int = MAX_TOTAL_BYTES, max_members: int = MAX_MEMBERS
) -> Extraction:
    """Extract `archive` into the empty folder `dest`; on refusal `dest` is left empty."""
    dest.mkdir(parents=True, exist_ok=True)
    budget = _Budget(max_bytes, max_members)
    try:
        if zipfile.is_zipfile(archive):
            _extract_zip(archive, dest, budget)
        elif tarfile.is_tarfile(archive):
            _extract_tar(archive, dest, budget)
        else:
            raise ArchiveError("not a zip or tar archive")
    except ArchiveError:
        _empty(dest)
        raise
    except (OSError, EOFError, zipfile.BadZipFile, tarfile.TarError, RuntimeError) as exc:
        # RuntimeError: zipfile's message for encrypted members.
        _empty(dest)
        raise ArchiveError(f"unreadable archive ({exc})") from None
    return budget.result


def _empty(dest: Path) -> None:
    for child in dest.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _order(members: list, name, size) -> list:
    """Python files first, then smallest first: what matters most fits the size limit."""
    return sorted(members, key=lambda m: (not name(m).endswith(".py"), size(m)))


def _too_big(budget: _Budget, name: str, size: int) -> bool:
    if budget.fits(size):
        return False
    budget.result.skipped.append(f"{name} ({size / 2**20:.1f} MiB: over the {budget.max_bytes // 2**20} MiB "
                                 "limit for a whole submission)")
    return True


def _extract_zip(archive: Path, dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > budget.max_members:
            raise ArchiveError(f"more than {budget.max_members} files")
        for info in infos:
            if _safe_relative(info.filename) is None:
                raise ArchiveError(f"member {info.filename!r} points outside the archive")
        for info in _order(infos, lambda i: i.filename, lambda i: i.file_size):
            rel = _safe_relative(info.filename)
            if info.is_dir():
                continue
            # Unix mode in the high bits: a symlink stored in a zip is a link,
            # whatever its contents say.
            mode = (info.external_attr >> 16) & 0o170000
            if mode and mode != 0o100000:
                budget.result.skipped.append(f"{info.filename} (not a regular file)")
                continue
            if _too_big(budget, info.filename, info.file_size):
                continue
            budget.member()
            with zf.open(info) as src:
                budget.copy(src, dest / rel)


def _extract_tar(archive: Path, dest: Path, budget: _Budget) -> None:
    with tarfile.open(archive) as tf:
        members = []
        for member in tf:
            if len(members) >= budget.max_members:
                raise ArchiveError(f"more than {budget.max_members} files")
            if _safe_relative(member.name) is None:
                raise ArchiveError(f"member {member.name!r} points outside the archive")
            members.append(member)
        extracted: set[PurePosixPath] = set()
        # Hard links last: their targets must be extracted first.
        for member in sorted(_order(members, lambda m: m.name, lambda m: m.size), key=lambda m: m.islnk()):
            rel = _safe_relative(member.name)
            if member.isdir():
                continue
            if member.islnk():
                _copy_hardlink(member, rel, dest, budget, extracted)
                continue
            if not member.isfile():
                budget.result.skipped.append(f"{member.name} (not a regular file)")
                continue
            if _too_big(budget, member.name, member.size):
                continue
            budget.member()
            src = tf.extractfile(member)
            if src is None:
                budget.result.skipped.append(f"{member.name} (unreadable)")
                continue
            with src:
                budget.copy(src, dest / rel)
            extracted.add(rel)


def _copy_hardlink(member, rel: PurePosixPath, dest: Path, budget: _Budget, extracted: set) -> None:
    """A hard link becomes a plain copy, and only of a member this archive already put inside `dest`."""
    target = _safe_relative(member.linkname)
    if target is None or target not in extracted:
        budget.result.skipped.append(f"{member.name} (a hard link to {member.linkname!r}, "
                                     "which is not a file of this archive)")
        return
    source = dest / target
    if _too_big(budget, member.name, source.stat().st_size):
        return
    budget.member()
    with open(source, "rb") as src:
        budget.copy(src, dest / rel)
    extracted.add(rel)
