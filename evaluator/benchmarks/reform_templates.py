"""PLACEHOLDER: filled by its author (see reform_layouts.py)."""
from __future__ import annotations

LAYOUTS: dict = {}
