"""The seed of one sampled request: from the benchmark, the run's base seed, the item and the repeat (or sample).

Every sampled request of every benchmark takes its seed from here, so that its draws belong to the item and the
repeat alone: never to a batch, a batch size, a device or the requests around it (the adapter samples each row from
its own seed: evaluator.models.sampling). The same inputs give the same seed in every run and process.
"""
from __future__ import annotations

import hashlib


def item_seed(benchmark: str, seed: int, item: str, repeat: int) -> int:
    """63 bits of the SHA-256 of "<benchmark>|<seed>|<item>|<repeat>"."""
    digest = hashlib.sha256(f"{benchmark}|{seed}|{item}|{repeat}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1
