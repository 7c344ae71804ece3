"""The feature cache's own rules (evaluator.models.image_features), on a stand-in encoder that counts what it sees:
images split by row or by a Qwen2-VL grid, each encoded once, answers in the call's order, the memory bound, and a call
that does not split passed through. tests/test_families.py runs it on every vision family's real model."""
from __future__ import annotations

import torch
from transformers.modeling_outputs import BaseModelOutputWithPooling

from evaluator.models.families import GRID, POOLED, ROWS, SIZED_ROWS
from evaluator.models.image_features import ImageFeatures, install, join_images, split_images


class Encoder:
    """A get_image_features stand-in: each image's feature is its pixels' sum times a scale; it counts the images."""

    def __init__(self, as_list: bool = True):
        self.seen: list[int] = []
        self.as_list = as_list

    def get_image_features(self, pixel_values, image_sizes=None, vision_feature_layer=-1, **kwargs):
        self.seen.append(pixel_values.shape[0])
        features = pixel_values.flatten(1).sum(1, keepdim=True) * vision_feature_layer
        return BaseModelOutputWithPooling(pooler_output=list(features) if self.as_list else features[:, None])


def _pixels(*values: float) -> torch.Tensor:
    return torch.stack([torch.full((3, 2, 2), float(v)) for v in values])


def test_each_image_is_encoded_once_and_answers_keep_the_calls_order():
    encoder = Encoder()
    features = ImageFeatures(ROWS)
    cached = features.wrap(encoder.get_image_features)
    first = cached(_pixels(1, 2, 1), vision_feature_layer=2)  # image 1 twice in one call: encoded once
    again = cached(_pixels(2, 3, 1), None, 2)  # positional arguments bind as the model's own call would
    assert encoder.seen == [2, 1]  # 1 and 2, then only 3
    assert [float(t) for t in first.pooler_output] == [24.0, 48.0, 24.0]
    assert [float(t) for t in again.pooler_output] == [48.0, 72.0, 24.0]
    assert features.record() == {"cached": True, "encoded": 3, "reused": 3}


def test_a_tensor_output_is_split_by_row_and_put_back_together():
    encoder = Encoder(as_list=False)
    cached = ImageFeatures(ROWS).wrap(encoder.get_image_features)
    cached(_pixels(1, 2))
    out = cached(_pixels(2, 1, 5))
    assert encoder.seen == [2, 1] and torch.is_tensor(out.pooler_output)
    assert out.pooler_output.flatten().tolist() == [-24.0, -12.0, -60.0]


def test_kept_features_are_let_go_past_the_bound_and_still_answer_right():
    encoder = Encoder()
    features = ImageFeatures(ROWS, max_bytes=2 * 4)  # two one-number features of 4 bytes
    cached = features.wrap(encoder.get_image_features)
    cached(_pixels(1, 2, 3))
    assert len(features.kept) == 2 and features.kept_bytes == 8
    out = cached(_pixels(1, 3))  # 1 was let go: encoded again; 3 kept
    assert encoder.seen == [3, 1] and [float(t) for t in out.pooler_output] == [-12.0, -36.0]


def test_qwen_images_split_by_their_grid():
    grid = torch.tensor([[1, 2, 2], [1, 2, 4]])
    pixels = torch.arange(12 * 5, dtype=torch.float32).view(12, 5)
    parts = split_images(GRID, {"pixel_values": pixels, "image_grid_thw": grid})
    assert [p["pixel_values"].shape[0] for p in parts] == [4, 8]
    assert torch.equal(parts[1]["image_grid_thw"], grid[1:])
    assert split_images(GRID, {"pixel_values": pixels[:11], "image_grid_thw": grid}) is None  # does not add up


def test_a_call_that_does_not_split_is_the_models_own():
    encoder = Encoder()
    features = ImageFeatures(ROWS)
    cached = features.wrap(encoder.get_image_features)
    sizes = torch.tensor([[2, 2]])  # one size for two images: not one row per image
    out = cached(_pixels(1, 2), image_sizes=sizes)
    assert encoder.seen == [2] and len(out.pooler_output) == 2 and features.record()["encoded"] == 0


def test_only_the_families_whose_features_are_the_images_are_cached():
    class Model:
        def get_image_features(self, pixel_values):
            return BaseModelOutputWithPooling(pooler_output=list(pixel_values))

    assert install(Model(), "idefics3") is None and install(Model(), "instructblip") is None
    model = Model()
    features = install(model, "paligemma")
    assert features is not None and model.get_image_features.__wrapped__ is not None


def test_images_padded_to_their_batch_are_known_without_the_padding():
    """SIZED_ROWS (Mistral 3's Pixtral): a batch's images are padded to the largest; each is cut to its image_sizes,
    so an image padded in one batch and not in another is encoded once, and new images of different sizes are padded
    again (with zeros) into one call."""
    small = torch.full((1, 3, 2, 1), 2.0)
    padded = torch.zeros((2, 3, 2, 3))
    padded[0, :, :2, :1], padded[1] = small[0], 5.0
    sizes = torch.tensor([[2, 1], [2, 3]])
    parts = split_images(SIZED_ROWS, {"pixel_values": padded, "image_sizes": sizes})
    assert [tuple(p["pixel_values"].shape) for p in parts] == [(1, 3, 2, 1), (1, 3, 2, 3)]
    assert torch.equal(join_images(parts)["pixel_values"], padded)
    assert split_images(SIZED_ROWS, {"pixel_values": padded}) is None  # no sizes: not split
    encoder = Encoder()
    cached = ImageFeatures(SIZED_ROWS).wrap(encoder.get_image_features)
    cached(small, image_sizes=torch.tensor([[2, 1]]))
    out = cached(padded, image_sizes=sizes)
    assert encoder.seen == [1, 1] and [float(t) for t in out.pooler_output] == [-12.0, -90.0]


def test_pooled_images_own_their_crops_and_pooling_indices():
    """POOLED (Molmo 2): an image's tokens (counted by its grid) pool patches of its own crops only; split, each image
    holds its crops and indices counted from its first crop (-1 kept), and joined again the call is as it was."""
    pixels = torch.arange(5 * 2 * 3, dtype=torch.float32).view(5, 2, 3)  # 5 crops of 2 patches
    grids = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 2]])  # 2 tokens, then 3
    pooling = torch.tensor([[0, 1], [2, -1], [4, 5], [6, -1], [8, 9]], dtype=torch.int32)
    parts = split_images(POOLED, {"pixel_values": pixels, "image_token_pooling": pooling, "image_grids": grids})
    assert [p["pixel_values"].shape[0] for p in parts] == [2, 3]
    assert parts[1]["image_token_pooling"].tolist() == [[0, 1], [2, -1], [4, 5]]
    joined = join_images(parts)
    assert torch.equal(joined["pixel_values"], pixels) and torch.equal(joined["image_token_pooling"], pooling)
    assert torch.equal(joined["image_grids"], grids)
    assert split_images(POOLED, {"pixel_values": pixels[:4], "image_token_pooling": pooling,
                                 "image_grids": grids}) is None  # an index past the call's crops
    assert split_images(POOLED, {"pixel_values": pixels, "image_token_pooling": pooling[:4],
                                 "image_grids": grids}) is None  # the grids count more tokens
