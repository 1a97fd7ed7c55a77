"""The evidence ledger (course/checks/README.md) stays in step with the checks: every check module
has an entry, every entry names a real check and its real test functions, every test function is
accounted for, and no judgment rests on a value the learner's process reports unless it is
cross-checked here or listed as an open gap."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

CHECKS = Path(__file__).resolve().parent.parent / "course" / "checks"
README = CHECKS / "README.md"
SOURCES = {"program", "recomputed", "reported"}
COLUMNS = ["test", "judgment", "evidence", "source", "cross-check"]


def _section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def ledger() -> dict[str, list[dict[str, str]]]:
    """{exercise: [row, ...]} from the ledger's tables, each row a dict of COLUMNS."""
    body = _section(README.read_text(encoding="utf-8"), "The evidence ledger")
    entries: dict[str, list[dict[str, str]]] = {}
    for block in re.split(r"^### ", body, flags=re.MULTILINE)[1:]:
        name, _, rest = block.partition("\n")
        name = name.strip().strip("`")
        assert name not in entries, f"two ledger entries for {name}"
        lines = [line.strip() for line in rest.splitlines() if line.strip().startswith("|")]
        assert lines, f"ledger entry {name} has no table"
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        assert header == COLUMNS, f"ledger entry {name}: columns {header}, expected {COLUMNS}"
        rows = []
        for line in lines[2:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert len(cells) == len(COLUMNS), f"ledger entry {name}: row {line!r} has {len(cells)} cells"
            rows.append(dict(zip(COLUMNS, cells)))
        entries[name] = rows
    return entries


def open_gaps() -> set[str]:
    body = _section(README.read_text(encoding="utf-8"), "Open gaps")
    return set(re.findall(r"^- `([a-z0-9_]+)`", body, re.MULTILINE))


def check_tests(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def _modules() -> dict[str, Path]:
    return {p.stem.removeprefix("test_"): p for p in sorted(CHECKS.glob("test_*.py"))}


def _named_tests(row: dict[str, str]) -> list[str]:
    return re.findall(r"`?(test_[a-z0-9_]+)`?", row["test"])


def test_every_check_module_has_an_entry_and_every_entry_a_module():
    entries, modules = ledger(), _modules()
    assert len(modules) >= 34
    assert sorted(set(modules) - set(entries)) == [], "check modules without a ledger entry"
    assert sorted(set(entries) - set(modules)) == [], "ledger entries for checks that do not exist"


def test_every_row_names_real_test_functions_and_every_test_function_appears():
    entries = ledger()
    for name, path in _modules().items():
        real = check_tests(path)
        named = set()
        for row in entries[name]:
            tests = _named_tests(row)
            assert tests, f"{name}: a ledger row names no test function: {row}"
            unknown = set(tests) - real
            assert not unknown, f"{name}: the ledger names {sorted(unknown)}, which {path.name} does not define"
            named |= set(tests)
        assert sorted(real - named) == [], f"{name}: test functions missing from the ledger"


def test_every_judgment_says_where_its_evidence_comes_from():
    for name, rows in ledger().items():
        for row in rows:
            assert row["judgment"] and row["evidence"], f"{name}: a row without its judgment or evidence: {row}"
            assert row["source"] in SOURCES, f"{name}: source {row['source']!r} is not one of {sorted(SOURCES)}"


def test_no_reported_value_goes_unchecked():
    gaps = open_gaps()
    for name, rows in ledger().items():
        for row in rows:
            cross = row["cross-check"]
            if row["source"] != "reported":
                continue
            assert cross not in ("", "-", "—"), (f"{name}: {row['test']} judges from a value the learner's "
                                                 "process reports, with no cross-check here")
            if "open gap" in cross.lower():
                assert name in gaps, f"{name}: an open gap in its entry that '## Open gaps' does not list"
    entries = ledger()
    for name in gaps:
        assert name in entries, f"'## Open gaps' lists {name}, which has no ledger entry"
        assert any("open gap" in r["cross-check"].lower() for r in entries[name]), (
            f"'## Open gaps' lists {name}, whose entry has no row marked as an open gap")


def test_the_parser_sees_a_missing_cross_check(tmp_path, monkeypatch):
    """The rule above can fail: a 'reported' row with no cross-check is refused."""
    text = README.read_text(encoding="utf-8")
    entries = ledger()
    name = next(iter(entries))
    row = entries[name][0]
    forged = f"| `{_named_tests(row)[0]}` | a judgment | a value | reported | — |"
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"### {name}") or line.startswith(f"### `{name}`"))
    table_end = next(i for i in range(at + 1, len(lines)) if lines[i].startswith("|")) + 2
    lines.insert(table_end, forged)
    fake = tmp_path / "README.md"
    fake.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "README", fake)
    try:
        test_no_reported_value_goes_unchecked()
    except AssertionError as e:
        assert "no cross-check" in str(e)
    else:
        raise AssertionError("a reported value without a cross-check was accepted")
