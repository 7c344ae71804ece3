"""The Markdown table of every setting (variable, default, what it sets), written from the declarations in
leaderboard/settings/__init__.py and the benchmarks' cards (`declared()`), so the docs cannot drift from the code.

    python tools/settings_table.py           # print the table
    python tools/settings_table.py --write   # rewrite it in docs/deploying.md, between the two marker comments
    python tools/settings_table.py --check   # exit 1 when docs/deploying.md's table differs from the code's
"""
from __future__ import annotations

import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

PAGE = PROJECT / "docs" / "deploying.md"
START, END = "<!-- settings:start -->", "<!-- settings:end -->"


def cell(text: str) -> str:
    """A table cell's text: a `|` would end the cell, so it is escaped."""
    return text.replace("|", "\\|")


def table() -> str:
    """The settings table, one row per declared setting, in declaration order (the cards' sources last)."""
    from leaderboard.settings import declared

    rows = ["| variable | default | what it sets |", "| --- | --- | --- |"]
    for variable, default, doc in declared():
        shown = f"`{cell(default)}`" if default else "(empty)"
        rows.append(f"| `{variable}` | {shown} | {cell(doc)} |")
    return "\n".join(rows) + "\n"


def page_table(text: str) -> str:
    """The text between the markers of a page (the table it shows)."""
    if START not in text or END not in text:
        raise ValueError(f"{PAGE.name} lacks the markers {START} and {END}")
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def rewritten(text: str) -> str:
    """`text` with the table between the markers replaced by the code's."""
    page_table(text)  # the markers are there
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    return f"{before}{START}\n{table()}{END}{after}"


def main(argv: list[str]) -> int:
    if "--write" in argv:
        text = PAGE.read_text(encoding="utf-8")
        new = rewritten(text)
        if new != text:
            PAGE.write_text(new, encoding="utf-8")
            print(f"rewrote the settings table in {PAGE.relative_to(PROJECT)}")
        else:
            print(f"{PAGE.relative_to(PROJECT)}: the settings table is current")
        return 0
    if "--check" in argv:
        if page_table(PAGE.read_text(encoding="utf-8")) != table():
            print(f"{PAGE.relative_to(PROJECT)}: the settings table differs from the code; run "
                  "python tools/settings_table.py --write", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
