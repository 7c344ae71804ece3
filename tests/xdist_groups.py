"""pytest-xdist's `--dist loadgroup` kept working under pytest 9.2, as a pytest plugin (tests/conftest.py loads it).

xdist 3.8 groups a test by appending "@<group>" to its `_nodeid` and schedules by the node id; pytest 9.2 builds node
ids from a structured `_id` and no longer reads `_nodeid`, so every `xdist_group` was silently spread over both
workers (each worker then built every family's tiny model, and `finished_runs`, itself). This sets the same suffix
on the id pytest 9.2 reads, after every other hook has marked the groups; a node id that already carries it (an
xdist or pytest where the suffix works) is left alone. tests/test_tiers.py checks that a group runs on one worker."""
from __future__ import annotations

import pytest


def group_suffix(item: pytest.Item) -> str:
    """"@<group>" for an item marked xdist_group (names joined as xdist joins them), else ""."""
    names = {str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
             for mark in item.iter_markers("xdist_group")}
    return f"@{'_'.join(sorted(names))}" if names else ""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers under --dist loadgroup
        return
    from _pytest.nodeid import coerce_node_id  # pytest 9.2's structured node ids (private: pinned pytest)

    for item in items:
        suffix = group_suffix(item)
        nodeid = item.nodeid
        if suffix and not nodeid.endswith(suffix):
            item._id = coerce_node_id(nodeid + suffix)
