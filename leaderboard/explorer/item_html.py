"""An opened question as HTML: its parts (evaluator cards' ItemParts) for one run, or two runs side by side.

Every value comes from a model, a judge or a data file, so every one goes through `html.escape` here and nowhere
else is any of it put into the page: tags, scripts and Markdown links show as the characters they are.
"""
from __future__ import annotations

import html
from typing import Sequence

from evaluator import api

MAX_TEXT = 20_000  # characters of one long text shown (a prompt, an output); the rest is cut with a note

STYLE = """<style>
.item-runs {display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 1rem;}
.item-run h3 {margin: 0.2rem 0 0.4rem;}
.item-part {margin-bottom: 0.8rem;}
.item-part h4 {margin: 0.4rem 0 0.2rem;}
.item-part table {border-collapse: collapse; font-size: 0.9em; width: 100%;}
.item-part td, .item-part th {border: 1px solid var(--border-color-primary, #ddd); padding: 2px 6px;
  text-align: left; vertical-align: top; white-space: pre-wrap; word-break: break-word;}
.item-part th {white-space: normal; word-break: normal; overflow-wrap: normal;}
.item-part pre {white-space: pre-wrap; word-break: break-word; max-height: 24rem; overflow: auto; margin: 0;}
</style>"""


def esc(value: object) -> str:
    """One value made inert in HTML (quotes too, since values also land in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def _long(text: str) -> str:
    if len(text) > MAX_TEXT:
        return esc(text[:MAX_TEXT]) + esc(f"\n… ({len(text) - MAX_TEXT} more characters in the details file)")
    return esc(text)


def part_html(part: api.ItemPart) -> str:
    """One part: its facts as a two-column table, its table, and its long texts folded."""
    out = [f'<div class="item-part"><h4>{esc(part.title)}</h4>']
    if part.facts:
        out.append("<table>" + "".join(f"<tr><th>{esc(label)}</th><td>{esc(value)}</td></tr>"
                                       for label, value in part.facts) + "</table>")
    if part.table:
        columns = list(dict.fromkeys(k for row in part.table for k in row))
        out.append("<table><tr>" + "".join(f"<th>{esc(c)}</th>" for c in columns) + "</tr>"
                   + "".join("<tr>" + "".join(f"<td>{esc(row.get(c, ''))}</td>" for c in columns) + "</tr>"
                             for row in part.table) + "</table>")
    for label, text in part.texts:
        out.append(f"<details><summary>{esc(label)}</summary><pre>{_long(text)}</pre></details>")
    out.append("</div>")
    return "".join(out)


def run_html(title: str, parts: Sequence[api.ItemPart] | None, missing: str = "") -> str:
    body = "".join(part_html(p) for p in parts) if parts else f"<p>{esc(missing)}</p>"
    return f'<div class="item-run"><h3>{esc(title)}</h3>{body}</div>'


def item_html(heading: str, runs: Sequence[tuple[str, Sequence[api.ItemPart] | None, str]], note: str = "") -> str:
    """The opened question: a heading, a note (why no image is shown), then each run's parts (title, parts or
    None, why they are missing)."""
    columns = "".join(run_html(title, parts, missing) for title, parts, missing in runs)
    note_html = f'<p class="picture-note">{esc(note)}</p>' if note else ""
    return (f'{STYLE}<div class="item-view"><h2>{esc(heading)}</h2>{note_html}'
            f'<div class="item-runs">{columns}</div></div>')
