"""Grader inputs: archives extracted safely, submissions found, files located sensibly."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from course.grader.archives import ArchiveError, archive_stem, extract_archive
from course.grader.discovery import discover, locate, source_fingerprint

EXPECTED = {"add": "01_basics/add.py", "scale": "02_more/scale.py"}


def _zip(path: Path, members: dict[str, bytes], links: dict[str, str] = {}) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, target)
    return path


def _tar(path: Path, members: dict[str, bytes], symlinks: dict[str, str] = {}) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, target in symlinks.items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)
    return path


def test_archive_names_lose_their_suffix():
    assert archive_stem(Path("alice.tar.gz")) == "alice"
    assert archive_stem(Path("bob.ZIP")) == "bob"
    assert archive_stem(Path("notes.txt")) is None


def test_zip_and_tar_extract_their_regular_files(tmp_path):
    members = {"exercises/01_basics/add.py": b"x = 1\n"}
    for archive in (_zip(tmp_path / "a.zip", members), _tar(tmp_path / "a.tar.gz", members)):
        dest = tmp_path / archive.name.replace(".", "_")
        result = extract_archive(archive, dest)
        assert (dest / "exercises/01_basics/add.py").read_bytes() == b"x = 1\n"
        assert result.files == 1


@pytest.mark.parametrize("name", ["../escape.py", "/etc/evil.py", "a/../../escape.py"])
def test_members_that_leave_the_folder_are_refused(tmp_path, name):
    dest = tmp_path / "out"
    with pytest.raises(ArchiveError, match="outside"):
        extract_archive(_tar(tmp_path / "bad.tar.gz", {"ok.py": b"1", name: b"2"}), dest)
    assert not (tmp_path / "escape.py").exists()
    assert list(dest.iterdir()) == []


def test_links_are_skipped_not_followed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("solution")
    dest = tmp_path / "out"
    result = extract_archive(_tar(tmp_path / "l.tar.gz", {"a.py": b"1"}, {"peek.py": str(secret)}), dest)
    assert not (dest / "peek.py").exists() and (dest / "a.py").exists()
    assert any("peek.py" in s for s in result.skipped)
    dest2 = tmp_path / "out2"
    extract_archive(_zip(tmp_path / "l.zip", {"a.py": b"1"}, {"peek.py": str(secret)}), dest2)
    assert not (dest2 / "peek.py").exists()


def test_size_cap_stops_a_bomb_and_keeps_the_exercises(tmp_path):
    bomb = _zip(tmp_path / "bomb.zip", {"big.bin": b"\0" * (3 * 1024 * 1024), "zz/add.py": b"x = 1\n",
                                        **{f"part{i}.bin": b"\0" * 400_000 for i in range(4)}})
    result = extract_archive(bomb, tmp_path / "out", max_bytes=1024 * 1024)
    assert (tmp_path / "out" / "zz/add.py").read_bytes() == b"x = 1\n"
    assert result.bytes <= 1024 * 1024 and not (tmp_path / "out" / "big.bin").exists()
    assert any(s.startswith("big.bin (3.0 MiB: over the 1 MiB limit") for s in result.skipped), result.skipped
    assert sum(s.startswith("part") for s in result.skipped) == 2


def test_a_data_file_larger_than_the_limit_does_not_cost_the_exercises_in_a_tar(tmp_path):
    members = {"data/big.csv": b"1," * 600_000, "exercises/01_basics/add.py": b"x = 1\n"}
    result = extract_archive(_tar(tmp_path / "a.tar.gz", members), tmp_path / "out", max_bytes=1024 * 1024)
    assert (tmp_path / "out/exercises/01_basics/add.py").exists()
    assert [s.split(" ")[0] for s in result.skipped] == ["data/big.csv"]


def _tar_with_hardlinks(path: Path, links: dict[str, str]) -> Path:
    with tarfile.open(path, "w") as tf:
        data = b"def add(a, b):\n    return a + b\n"
        info = tarfile.TarInfo("orig/add.py")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        for name, target in links.items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.LNKTYPE
            info.linkname = target
            tf.addfile(info)
    return path


def test_a_hard_link_to_a_member_of_the_archive_is_kept_as_a_copy(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("solution")
    archive = _tar_with_hardlinks(tmp_path / "h.tar", {"exercises/01_basics/add.py": "orig/add.py",
                                                        "peek.py": str(secret), "up.py": "../secret.py",
                                                        "ghost.py": "not/there.py"})
    dest = tmp_path / "out"
    result = extract_archive(archive, dest)
    copy = dest / "exercises/01_basics/add.py"
    assert copy.read_text().startswith("def add") and not copy.is_symlink()
    assert copy.stat().st_ino != (dest / "orig/add.py").stat().st_ino  # a copy, never a link
    for name in ("peek.py", "up.py", "ghost.py"):
        assert not (dest / name).exists()
        assert any(s.startswith(f"{name} (a hard link") for s in result.skipped), result.skipped


def test_not_an_archive_is_a_clear_error(tmp_path):
    fake = tmp_path / "fake.zip"
    fake.write_text("hello")
    with pytest.raises(ArchiveError, match="not a zip or tar"):
        extract_archive(fake, tmp_path / "out")


def test_discover_lists_folders_and_archives_with_unique_ids(tmp_path):
    (tmp_path / "alice").mkdir()
    _zip(tmp_path / "alice.zip", {"x.py": b"1"})
    (tmp_path / "bob smith").mkdir()
    (tmp_path / "notes.txt").write_text("not a submission")
    (tmp_path / ".DS_Store").write_text("")
    (tmp_path / ".anna").mkdir()  # a learner's hand-in that a file manager hides: reported, not lost
    subs, ignored = discover(tmp_path)
    assert [s.id for s in subs] == ["alice", "alice-2", "bob_smith"]
    assert [s.is_archive for s in subs] == [False, True, False]
    assert ignored == [".DS_Store (its name starts with '.': rename it to grade it)",
                       ".anna (its name starts with '.': rename it to grade it)",
                       "notes.txt (neither a folder nor a .zip/.tar archive)"]


def test_unsupported_hand_ins_are_learners_with_a_reason(tmp_path):
    (tmp_path / "carol.7z").write_bytes(b"7z\xbc\xaf")
    (tmp_path / "dave.rar").write_bytes(b"Rar!")
    (tmp_path / "erin.py").write_text("def add(a, b): return a + b\n")
    (tmp_path / "notes.txt").write_text("not a submission")
    subs, ignored = discover(tmp_path)
    assert {s.id: s.problem.split(";")[0] for s in subs} == {
        "carol": "carol.7z is a 7-Zip archive", "dave": "dave.rar is a RAR archive",
        "erin": "erin.py is a loose Python file"}
    assert ignored == ["notes.txt (neither a folder nor a .zip/.tar archive)"]


def test_a_deeply_nested_hand_in_is_found_and_a_bounded_search_says_where_it_stopped(tmp_path, monkeypatch):
    import course.grader.discovery as discovery

    deep = "a/b/c/d/e/f/g/h/exercises/01_basics/add.py"
    _files(tmp_path, [deep])
    assert locate(tmp_path, EXPECTED)["add"].relative == deep
    monkeypatch.setattr(discovery, "MAX_DEPTH", 3)
    scan = discovery.scan_files(tmp_path)
    assert scan.files == [] and "3 levels deep" in scan.stopped


def test_copies_take_exercise_files_first_and_name_what_was_left_out(tmp_path):
    from course.grader.worker import MAX_COPY_BYTES, copy_plan

    _files(tmp_path, ["exercises/01_basics/add.py", "zz/helper.py"])
    big = tmp_path / "aaa_data.bin"
    with open(big, "wb") as f:
        f.truncate(70 * 1024 * 1024)  # sparse: 70 MiB by its size, nothing on the disk
    files = discovery_files(tmp_path)
    kept, left_out = copy_plan(tmp_path, files, [tmp_path / "exercises/01_basics/add.py"])
    assert kept[0] == tmp_path / "exercises/01_basics/add.py" and tmp_path / "zz/helper.py" in kept
    assert big not in kept and left_out == ["aaa_data.bin (70.0 MiB)"]
    assert sum(f.stat().st_size for f in kept) <= MAX_COPY_BYTES


def discovery_files(root: Path) -> list[Path]:
    from course.grader.discovery import regular_files

    return regular_files(root)


def _files(root: Path, rels: list[str]) -> None:
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# " + rel)


def test_locate_prefers_the_course_layout_and_notes_any_guess(tmp_path):
    _files(tmp_path, ["exercises/01_basics/add.py", "old/add.py", "scale.py"])
    found = locate(tmp_path, EXPECTED)
    assert found["add"].relative == "exercises/01_basics/add.py" and found["add"].note is None
    assert found["scale"].relative == "scale.py"
    assert "expected exercises/02_more/scale.py" in found["scale"].note


def test_locate_finds_a_nested_exercises_folder_and_skips_links(tmp_path):
    _files(tmp_path, ["alice-hw/exercises/01_basics/add.py"])
    (tmp_path / "scale.py").symlink_to("/etc/passwd")
    found = locate(tmp_path, EXPECTED)
    assert found["add"].relative == "alice-hw/exercises/01_basics/add.py"
    assert "scale" not in found


def test_fingerprint_changes_with_content(tmp_path):
    (tmp_path / "s").mkdir()
    _files(tmp_path / "s", ["exercises/01_basics/add.py"])
    subs, _ = discover(tmp_path)
    before = source_fingerprint(subs[0])
    (tmp_path / "s/exercises/01_basics/add.py").write_text("changed")
    assert source_fingerprint(subs[0]) != before
