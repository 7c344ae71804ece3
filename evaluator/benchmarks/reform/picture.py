"""A ReForm-Eval question's image in the explorer (ItemView.picture): read again from the data file its details row
names (image_ref "<data file>#<n>", items.with_source), as the suite read it: the n-th record, its region marked."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Callable

from PIL import Image

from evaluator.benchmarks.item_tables import text
from evaluator.benchmarks.reform.datasets import DATASETS_BY_NAME
from evaluator.benchmarks.reform.files import item_records, read_data
from evaluator.benchmarks.reform.image_refs import image_field
from evaluator.benchmarks.reform.items import _image
from evaluator.benchmarks.reform.layouts import adapt
from evaluator.benchmarks.reform.suite import SAMPLE_PATH
from evaluator.inputs.images import ImageUnavailable, is_url
from evaluator.inputs.sources import json_records


def _where(file: str) -> str:
    """The file to read: a URL, hf:// reference or absolute path as it is; a bare name inside the sample folder."""
    if is_url(file) or file.startswith("hf://") or Path(file).is_absolute():
        return file
    root = SAMPLE_PATH.parent.resolve()
    path = (root / file).resolve()
    if root not in path.parents:
        raise ImageUnavailable(file, "outside the benchmark's sample folder")
    return str(path)


@lru_cache(maxsize=2)  # a full-suite file can be large: the last two read stay parsed
def _records(file: str, dataset: str) -> tuple[list, Callable[[str], str]]:
    """The records of a data file as the suite read them (its dataset's layout) and how its paths resolve."""
    content, resolve = read_data(file)
    entry = DATASETS_BY_NAME.get(dataset)
    if entry is None or entry.layout == "items" and not entry.multi_file:
        return item_records(content, file), resolve
    if entry.multi_file:  # TDIUC questions / COCO counting annotations: the image in "image" (or its id field)
        keys = ("questions", "data") if entry.question_type is not None else ("data",)
        rows = json_records(content, file, keys)
        return [{"image": r.get("image") or r.get("image_id") or r.get("Image_ID")} if isinstance(r, dict) else {}
                for r in rows], resolve
    return adapt(entry.layout, content, file), resolve


def picture(row: dict, images_dir: Path) -> Image.Image:
    """The image as the model saw it; ImageUnavailable when the row names none or it cannot be read."""
    ref = text(row.get("image_ref"))
    file, sep, index = ref.rpartition("#")
    if not sep or not file or not index.isdigit():
        raise ImageUnavailable(ref or "(none)", "the details name no image (a run from before image_ref)")
    try:
        records, resolve = _records(_where(file), text(row.get("dataset")))
        record = records[int(index)]
        image_ref = image_field(record) if isinstance(record, dict) else None
        if image_ref is None:
            raise ImageUnavailable(ref, "the data file's item has no image")
        return _image(record, image_ref, resolve, Path(images_dir) / "reform")[0]
    except (ValueError, IndexError, OSError) as exc:
        raise ImageUnavailable(ref, f"{type(exc).__name__}: {str(exc)[:200]}") from None
