"""ReForm-Eval's official file layouts, adapted into the records load_items reads (see reform_data's docstring).

Most Hub files of `Aweminus/ReForm-Eval-Data` hold records load_items reads as they are (layout "items"). The
others keep the layout their official builder (FudanDISC/ReForm-Eval build/<Dataset>/*.py) reads; each such
layout has an adapter here, named in the dataset table (ReformDataset.layout):

    adapter(data) -> list[dict]

`data` is the parsed JSON of the whole file; each returned record has the keys normalise_item accepts
(question_id, question, answer (option text or index), answer_options, image (base64 or a path), history, and
"region" [x0, y0, x1, y1] for a region to mark). Question wording for datasets without a question is ours
(instruction templates of this project, not the builders' sentences).
"""
from __future__ import annotations

import json
from typing import Any, Callable

from evaluator.benchmarks import reform_dialogue, reform_templates

Adapter = Callable[[Any], list[dict]]

LAYOUTS: dict[str, Adapter] = {
    **reform_templates.LAYOUTS,
    **reform_dialogue.LAYOUTS,
}


def adapt(layout: str, text: str, source: str) -> list[dict]:
    """The records of a file in one of LAYOUTS; ValueError for an unknown layout or unreadable JSON."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown ReForm-Eval file layout {layout!r}; known: {', '.join(sorted(LAYOUTS))}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not valid JSON ({exc})") from None
    try:
        return LAYOUTS[layout](data)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"{source}: not in the {layout!r} layout ({type(exc).__name__}: {exc})") from None
