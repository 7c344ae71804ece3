"""How two runs the Explorer compares were asked differently (suite, limit, the benchmark's mode, thinking, judge),
from their board rows, in the words `python -m evaluator compare` warns with (evaluator.api.protocol_differences)."""
from __future__ import annotations

import pandas as pd

from evaluator import api
from leaderboard.formatting import as_float


def _cell(row: pd.Series, column: str) -> str | None:
    value = row.get(column)
    return value if isinstance(value, str) and value.strip() else None


def row_protocol(row: pd.Series) -> dict:
    """A board row's protocol as evaluator.runs.compare.protocol reads one from results.json: its "modes" column
    ("name=mode,...") as a dict, the first word of its "thinking_mode", an empty limit as 0."""
    modes = dict(part.split("=", 1) for part in (_cell(row, "modes") or "").split(",") if "=" in part)
    limit = as_float(row.get("limit"))
    return {"suite": _cell(row, "suite"), "limit": int(limit) if limit and limit > 0 else 0, "modes": modes,
            "thinking": next(iter((_cell(row, "thinking_mode") or "").split()), None),
            "judge": _cell(row, "judge")}


def protocol_notes(raw: pd.DataFrame | None, run: str, compare: str, benchmark: str) -> list[str]:
    """A sentence for each way run A (`run`) and run B (`compare`) were asked differently on `benchmark`; [] when not
    comparing, or when either run is not on the board."""
    if raw is None or not compare or compare == run or "key" not in raw:
        return []
    rows = [raw[raw["key"] == key] for key in (run, compare)]
    if any(found.empty for found in rows):
        return []
    return api.protocol_differences(row_protocol(rows[0].iloc[0]), row_protocol(rows[1].iloc[0]), [benchmark])
