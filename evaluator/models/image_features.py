"""Each image encoded once per run: the vision tower's output for an image is kept by the image's content and reused by
every later request that shows it again (ReForm-Eval asks each item several times, by generation and by likelihood;
CURE asks several questions of one picture).

transformers 5 encodes a batch's images in one call of the model's `get_image_features` (before the prefill in
generate, and in forward). ImageFeatures wraps that call on the loaded model: the call's inputs are split into images
(the family's image_layout, families.py: one row each, a Qwen2-VL image's patches by its grid, or a Molmo 2 image's
crops by the patches its tokens pool), each image is known by a hash of its pixels, only the images not seen before
are encoded (together, in one call), and the features the language model reads (the output's `pooler_output`, or
the field the family names, image_output: Llama 4's last_hidden_state; one entry per image, and the per-image outputs
the family names beside it, image_extras: Qwen3-VL's DeepStack features) are put back together in the call's order. Kept
features live on the model's device, the least recently used let go past `max_bytes`.

A family without an image_layout is not cached, and its declaration says why (images_not_kept: Idefics3 and SmolVLM,
whose prompts' images arrive padded with blank images and split into crops; InstructBLIP, whose Q-Former reads the
question beside the image). BLIP-2 is cached when its options are scored, not when it generates: its generate encodes
the images itself (images_scoring_only). A call whose inputs or output do not split as expected is passed through
untouched.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from evaluator.models.families import GRID, POOLED, SIZED_ROWS, family

MAX_BYTES = 1 << 30  # kept features, at most (on the model's device)
# Per image, split with its rows: Gemma 4's image_position_ids (patch x, y); LLaVA-OneVision's batch_num_images (images
# per prompt, which decide whether an image is tiled) splits by row only when every prompt has one image (one entry
# per image, each 1): a call with a prompt of several images does not split, and is the model's own. LFM2-VL's
# pixel_attention_mask (its padded patches) and spatial_shapes (each row's patch grid) belong to their row (a tile).
PER_IMAGE_INPUTS = ("pixel_values", "image_sizes", "image_grid_thw", "image_position_ids", "batch_num_images",
                    "pixel_attention_mask", "spatial_shapes")
# Per image in a POOLED call (Molmo 2): its tokens' rows of pooling indices into the call's patches, and its grid (the
# low- and high-resolution token rows and columns, which count its tokens).
POOLED_INPUTS = ("image_token_pooling", "image_grids")


def _fingerprint(parts: dict[str, torch.Tensor]) -> str:
    """One image's inputs, hashed: shapes, dtypes and bytes."""
    digest = hashlib.blake2b(digest_size=20)
    for name in sorted(parts):
        tensor = parts[name].detach().contiguous().cpu()
        digest.update(f"{name}|{tuple(tensor.shape)}|{tensor.dtype}|".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


def split_images(layout: str, inputs: dict[str, Any]) -> list[dict[str, torch.Tensor]] | None:
    """The call's per-image inputs, in order; None when they do not split as the layout says."""
    pixels = inputs.get("pixel_values")
    if not torch.is_tensor(pixels) or pixels.dim() < 2:
        return None
    if layout == POOLED:
        return _split_pooled(pixels, inputs.get("image_token_pooling"), inputs.get("image_grids"))
    if layout == GRID:
        grid = inputs.get("image_grid_thw")
        if not torch.is_tensor(grid) or grid.dim() != 2 or int(grid.prod(-1).sum()) != pixels.shape[0]:
            return None
        rows = grid.prod(-1).tolist()
        starts = [sum(rows[:i]) for i in range(len(rows))]
        return [{"pixel_values": pixels[s:s + n], "image_grid_thw": grid[i:i + 1]}
                for i, (s, n) in enumerate(zip(starts, rows))]
    count = pixels.shape[0]
    extra = {name: value for name, value in inputs.items() if name in PER_IMAGE_INPUTS and name != "pixel_values"
             and value is not None}
    if any(not torch.is_tensor(v) or v.shape[0] != count for v in extra.values()):
        return None
    if "batch_num_images" in extra and bool((extra["batch_num_images"] != 1).any()):
        return None  # its entries count a prompt's images, not a row's: split only when each prompt has one
    parts = [{"pixel_values": pixels[i:i + 1], **{n: v[i:i + 1] for n, v in extra.items()}} for i in range(count)]
    if layout == SIZED_ROWS:  # each image without its batch's padding
        sizes = extra.get("image_sizes")
        if sizes is None or pixels.dim() != 4 or sizes.dim() != 2:
            return None
        for part, (height, width) in zip(parts, sizes.tolist()):
            part["pixel_values"] = part["pixel_values"][..., :height, :width]
    return parts


def _split_pooled(pixels: torch.Tensor, pooling: Any, grids: Any) -> list[dict[str, torch.Tensor]] | None:
    """A POOLED call's images: image i owns the next grid[0] * grid[1] + grid[2] * grid[3] rows of the pooling
    indices (-1: no patch), and the crops its indices reach, which follow the previous image's; its indices are made
    its own (counted from its first crop). None when the call is not laid out so."""
    if (not torch.is_tensor(pooling) or not torch.is_tensor(grids) or pixels.dim() != 3 or pooling.dim() != 2
            or grids.dim() != 2 or grids.shape[1] != 4):
        return None
    tokens = (grids[:, 0] * grids[:, 1] + grids[:, 2] * grids[:, 3]).tolist()
    if sum(tokens) != pooling.shape[0]:
        return None
    per_crop = pixels.shape[1]
    parts, start, crop = [], 0, 0
    for i, count in enumerate(tokens):
        rows = pooling[start:start + count]
        start += count
        used = rows[rows >= 0]
        if not used.numel() or int(used.min()) // per_crop != crop:
            return None
        end = int(used.max()) // per_crop + 1
        parts.append({"pixel_values": pixels[crop:end], "image_grids": grids[i:i + 1],
                      "image_token_pooling": torch.where(rows >= 0, rows - crop * per_crop, rows)})
        crop = end
    return parts if crop == pixels.shape[0] else None


def join_images(parts: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The images' inputs as one call's; images of different sizes (SIZED_ROWS) padded with zeros to the largest;
    POOLED images' pooling indices moved past the patches of the images before them."""
    joined = {}
    for name in parts[0]:
        tensors = [part[name] for part in parts]
        if name == "image_token_pooling":
            patches = [part["pixel_values"].shape[0] * part["pixel_values"].shape[1] for part in parts]
            offsets = [sum(patches[:i]) for i in range(len(parts))]
            tensors = [torch.where(t >= 0, t + offset, t) for t, offset in zip(tensors, offsets)]
        if name == "pixel_values" and len({tuple(t.shape[1:]) for t in tensors}) > 1:
            height, width = max(t.shape[-2] for t in tensors), max(t.shape[-1] for t in tensors)
            tensors = [torch.nn.functional.pad(t, (0, width - t.shape[-1], 0, height - t.shape[-2])) for t in tensors]
        joined[name] = torch.cat(tensors)
    return joined


@dataclass
class ImageFeatures:
    """A run's kept image features and what they saved: images encoded, and images reused (vision passes saved),
    counted in the encoder's rows (a tiled family's rows are its images' tiles)."""

    layout: str
    max_bytes: int = MAX_BYTES
    encoded: int = 0
    reused: int = 0
    kept: OrderedDict = field(default_factory=OrderedDict)  # fingerprint -> one image's pooler entry
    kept_bytes: int = 0
    output_type: type | None = None
    as_list: bool = True  # the pooler output is a list of per-image tensors (else one tensor, a row per image)
    # outputs beside pooler_output kept per image, each a list (per layer) of per-image splits (Family.image_extras);
    # with any, a kept entry is (pooler entry, {name: [one tensor per layer]})
    extras: tuple[str, ...] = ()
    # the output field holding the features the language model reads, one entry per image (Family.image_output)
    output_field: str = "pooler_output"

    def record(self) -> dict:
        return {"cached": True, "encoded": self.encoded, "reused": self.reused}

    def clear(self) -> None:
        """Let every kept feature go (a bench that times the vision tower each time)."""
        self.kept.clear()
        self.kept_bytes = 0

    def _keep(self, key: str, entry: Any) -> None:
        self.kept[key] = entry
        self.kept_bytes += _nbytes(entry)
        while self.kept_bytes > self.max_bytes and len(self.kept) > 1:
            _, old = self.kept.popitem(last=False)
            self.kept_bytes -= _nbytes(old)

    def _with_extras(self, output: Any, pooled: list[torch.Tensor] | None, count: int) -> list | None:
        """Each image's (pooler entry, {extra: [its split per layer]}); None when an extra does not split so."""
        if pooled is None:
            return None
        found: list[tuple[torch.Tensor, dict]] = [(entry, {}) for entry in pooled]
        for name in self.extras:
            layers = getattr(output, name, None)
            if not isinstance(layers, (list, tuple)) or any(
                    not isinstance(layer, (list, tuple)) or len(layer) != count for layer in layers):
                return None
            for i, (_, extra) in enumerate(found):
                extra[name] = [layer[i] for layer in layers]
        return found

    def _output(self, entries: list) -> Any:
        """The model's output type over the call's entries, in its order."""
        if not self.extras:
            return _new_output(self.output_type, **{self.output_field: entries if self.as_list else torch.cat(entries)})
        pooled = [entry for entry, _ in entries]
        extras = {name: [tuple(extra[name][layer] for _, extra in entries)
                         for layer in range(len(entries[0][1][name]))] for name in self.extras}
        return _new_output(self.output_type, **{self.output_field: pooled if self.as_list else torch.cat(pooled)},
                           **extras)

    def _entries(self, output: Any, count: int) -> list[torch.Tensor] | None:
        """The output's pooler entries, one per image; None when it does not split so."""
        pooled = getattr(output, self.output_field, None)
        if isinstance(pooled, (list, tuple)) and len(pooled) == count:
            self.as_list = True
            return list(pooled)
        if torch.is_tensor(pooled) and pooled.shape[0] == count:
            self.as_list = False
            return [pooled[i:i + 1] for i in range(count)]
        return None

    def wrap(self, encode: Callable[..., Any]) -> Callable[..., Any]:
        """`encode` (a model's get_image_features) answering from the kept features where it can."""
        signature = inspect.signature(encode)

        @functools.wraps(encode)  # its signature too: generate reads it to find the call's inputs
        def cached(*args, **kwargs):
            named = _named(signature, args, kwargs)
            parts = split_images(self.layout, named) if named is not None else None
            if not parts:
                return encode(*args, **kwargs)
            keys = [_fingerprint(part) for part in parts]
            found = {key: self.kept[key] for key in keys if key in self.kept}  # taken before anything is let go
            for key in found:
                self.kept.move_to_end(key)
            fresh = list(dict.fromkeys(key for key in keys if key not in found))
            if fresh:
                rest = {name: value for name, value in named.items()
                        if name not in PER_IMAGE_INPUTS and name not in POOLED_INPUTS}
                output = encode(**join_images([parts[keys.index(key)] for key in fresh]), **rest)
                entries = self._entries(output, len(fresh))
                if self.extras:
                    entries = self._with_extras(output, entries, len(fresh))
                if entries is None:  # not as expected: this call is the model's own, nothing kept
                    return encode(*args, **kwargs)
                self.output_type = type(output)
                for key, entry in zip(fresh, entries):
                    found[key] = entry
                    self._keep(key, entry)
            self.encoded += len(fresh)
            self.reused += len(keys) - len(fresh)
            return self._output([found[key] for key in keys])
        return cached


def _new_output(output_type: type, **values: Any) -> Any:
    """An output of the model's type holding `values`; the fields its type requires besides them are None
    (TimmWrapper's last_hidden_state, for the towers transformers builds through timm: Gemma 3n, PerceptionLM)."""
    required = []
    if dataclasses.is_dataclass(output_type):
        required = [f.name for f in dataclasses.fields(output_type) if f.name not in values
                    and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    return output_type(**dict.fromkeys(required), **values)


def _nbytes(entry: Any) -> int:
    """A kept entry's bytes: a tensor, or (pooler entry, {extra: [tensors]})."""
    if torch.is_tensor(entry):
        return entry.numel() * entry.element_size()
    pooled, extras = entry
    return _nbytes(pooled) + sum(_nbytes(t) for layers in extras.values() for t in layers)


def _named(signature: inspect.Signature, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """A call's arguments by name (its **kwargs folded in); None when it does not bind or passes *args."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None
    named: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                return None
        else:
            named[name] = value
    return named


def describe(features: ImageFeatures | None, model_type: str | None) -> dict:
    """What results.json says of a vision model's image features (run.image_features): images encoded and reused,
    or why they are not kept."""
    if features is not None:
        return features.record()
    return {"cached": False, "why": family(model_type).images_not_kept or "not cached for this family"}


def install(model: Any, model_type: str | None, max_bytes: int = MAX_BYTES) -> ImageFeatures | None:
    """Cache the image features of `model` (a loaded vision-language model) for the rest of its run; None for a family
    whose features are not kept (its image_layout is None) or that has no get_image_features to wrap."""
    declared = family(model_type)
    layout = declared.image_layout
    if layout is None:
        return None
    inner = getattr(model, "model", None)
    owner = inner if inner is not None and callable(getattr(inner, "get_image_features", None)) else model
    if not callable(getattr(owner, "get_image_features", None)):
        return None
    features = ImageFeatures(layout, max_bytes, extras=declared.image_extras, output_field=declared.image_output)
    owner.get_image_features = features.wrap(owner.get_image_features)
    if owner is not model and callable(getattr(model, "get_image_features", None)):
        model.get_image_features = owner.get_image_features  # the outer model's delegates: one wrapper for both
    return features
