"""The model families this leaderboard runs, one declaration each: FAMILIES (vision-language, by model_type) and
TEXT_FAMILIES (the text-only causal LMs whose option scoring was checked; any other decoder-only causal LM runs with
the defaults of TEXT_DEFAULT).

A Family says everything the adapter does differently for it: how it is prompted (its PromptStyle), how its options
are scored (many questions at once, one question over its prompt's cache, or one forward pass per option), what its
forward is fed beside input_ids when options are appended, whether its image features are kept for the run and how
its images split, whether the static KV cache runs for it, and which processor attribute holds the text its chat
template writes for one image. Each family here has a tiny random-weight model (tests/tiny_models/) that passes the
family matrix (tests/test_families.py, tests/test_scoring.py); a family is added only with those tests passing. Any
other image-text-to-text architecture is refused at submission time, and docs/models.md (written by
tools/families_table.py from this table and transformers' own mapping) says why.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from evaluator.models.prompts import TEXT_STYLE, PromptStyle

# How a family's options are scored (evaluator.models.scoring, evaluator.models.batched_scoring).
BATCHED = "batched"  # many questions' prompts prefilled together, every option over its question's cache rows
SHARED = "shared_prefix"  # one question at a time: its prompt encoded once, its options over that cache
REFERENCE = "reference"  # one full forward pass per option

# What runs the options over the prompt's cache: the whole model, or its language model alone.
MODEL, LANGUAGE_MODEL = "model", "language_model"

# How a get_image_features call's inputs split into images (evaluator.models.image_features).
ROWS, GRID = "rows", "grid"
# One row per image, padded to the largest image of its batch: each row is cut to its image_sizes (height, width)
# before it is known and encoded (Pixtral's tower reads only that part), so an image is the same in any batch.
SIZED_ROWS = "sized_rows"
# An image's crops are rows of the call (how many, read from the patches its tokens pool), and its tokens' pooling
# indices into the call's patches are counted from its own first crop (Molmo 2: image_token_pooling, image_grids).
POOLED = "pooled"

# The fill of a per-token side input over appended option tokens, unless a family says otherwise.
SIDE_INPUT_FILL = {"attention_mask": 1, "token_type_ids": 0, "mm_token_type_ids": 0}


@dataclass(frozen=True)
class Family:
    """One model family's facts.

    style:            how it is prompted and fed (prompts.PromptStyle).
    option_scoring:   BATCHED, SHARED or REFERENCE, the fastest path its tests showed equal to the reference.
    why_not_batched:  why option_scoring is not BATCHED (said in docs/models.md).
    decoder:          the model_type of the text decoder its tiny model was checked with (its text_config's); the
                      shared prefix runs only on checked decoders, whatever family carries them.
    attention_layers: the kinds of attention layers (a text config's layer_types) checked under the shared prefix.
    continuation:     "model" (options run through the whole model over the cache) or "language_model" (through
                      its language model: BLIP-2 style models, whose forward always encodes the image).
    mrope:            multimodal rotary positions (Qwen-VL): continuation positions come from its own rope index.
    side_fill:        per-token side inputs whose fill over option tokens differs from SIDE_INPUT_FILL.
    last_row_inputs:  per-token side inputs of more dimensions than input_ids (batch, tokens, ...) that continue over
                      appended option tokens with the prompt's last row, as its generate extends them (mllama's
                      cross_attention_mask: which images and tiles each text token reads).
    image_layout:     how its image-encoder calls split into images (ROWS, GRID, SIZED_ROWS, POOLED), None when
                      features are not kept.
    images_not_kept:  why its image features are not kept (image_layout None).
    image_extras:     outputs of its get_image_features besides pooler_output that hold features per image, one
                      split by image per layer (Qwen3-VL's deepstack_features): kept with each image.
    image_output:     the field of its get_image_features output that holds the features its language model reads,
                      one entry per image (pooler_output; Llama 4's: last_hidden_state, a row per tile).
    images_scoring_only: why they are kept for option scoring only (its generate encodes images itself).
    static_cache:     why the static KV cache does not run for it ("": it runs).
    placeholder:      the processor attribute holding the text its prompt carries once per image (None: the
                      processor places the image tokens itself).
    ragged_tiles:     its processor gives each image the number of tiles its shape calls for, and images whose
                      counts differ do not stack into one tensor: the pixel values are asked for unstacked and every
                      tile becomes a row of its own (the model encodes its tiles one by one, in order, whichever
                      image they come from), so the kept features are the tiles'.
    """

    style: PromptStyle = PromptStyle()
    option_scoring: str = BATCHED
    why_not_batched: str = ""
    decoder: str = ""
    attention_layers: tuple[str, ...] = ("full_attention",)
    continuation: str = MODEL
    mrope: bool = False
    side_fill: dict[str, int] = field(default_factory=dict)
    last_row_inputs: tuple[str, ...] = ()
    image_layout: str | None = None
    images_not_kept: str = ""
    image_extras: tuple[str, ...] = ()
    image_output: str = "pooler_output"
    images_scoring_only: str = ""
    static_cache: str = ""
    placeholder: str | None = "image_token"
    ragged_tiles: bool = False

    def fill(self, key: str) -> int:
        """What a per-token side input holds over appended option tokens."""
        return self.side_fill.get(key, SIDE_INPUT_FILL.get(key, 0))


_CROPS = "a prompt's images arrive padded with blank images and split into crops"
_QUERY_POSITIONS = ("its processor puts the query tokens in front of the left padding (padding in the middle of a "
                    "row), which moves the rotary distance between them and the text")

# The vision-language families that run (model_type -> Family).
FAMILIES: dict[str, Family] = {
    "llava": Family(decoder="llama", image_layout=ROWS),
    "llava_next": Family(decoder="llama", image_layout=ROWS),
    "idefics3": Family(PromptStyle(nested_images=True), decoder="llama", images_not_kept=_CROPS),
    "smolvlm": Family(PromptStyle(nested_images=True), decoder="llama", images_not_kept=_CROPS),
    "qwen2_vl": Family(decoder="qwen2_vl_text", mrope=True, image_layout=GRID),
    "qwen2_5_vl": Family(decoder="qwen2_5_vl_text", mrope=True, image_layout=GRID),
    # No chat template: the prompt is the text; the processor adds the image tokens, BOS and the "\n" that ends
    # the prefix (token_type_ids 0; what follows is the suffix, 1). Its processor refuses text without an image.
    "paligemma": Family(PromptStyle(prompt="plain", image_marker=True, mixes=False, text_only="{bos}{text}\n",
                                    max_images=1),
                        decoder="gemma", side_fill={"token_type_ids": 1}, image_layout=ROWS),
    # No chat template; the processor puts the query-token placeholders before the text. The model needs pixel
    # values, so a prompt without an image runs through its language model alone.
    "blip-2": Family(PromptStyle(prompt="qa", mixes=False, text_only="language_model", max_images=1),
                     decoder="opt", continuation=LANGUAGE_MODEL, image_layout=ROWS, placeholder=None,
                     images_scoring_only="its generate encodes the images itself, not through get_image_features"),
    "instructblip": Family(PromptStyle(prompt="qa", mixes=False, text_only="language_model", max_images=1),
                           option_scoring=SHARED, why_not_batched=_QUERY_POSITIONS, decoder="llama",
                           continuation=LANGUAGE_MODEL, placeholder=None,
                           images_not_kept=("its Q-Former reads the question beside the image, so the features "
                                            "are not the image's alone")),
    # DeepStack: its language model also reads each image's features from the vision layers it names.
    "qwen3_vl": Family(decoder="qwen3_vl_text", mrope=True, image_layout=GRID,
                       image_extras=("deepstack_features",)),
    # Its text model mixes Gated DeltaNet linear-attention layers (a conv and a recurrent state per row, no keys and
    # values) with full-attention ones.
    "qwen3_5": Family(decoder="qwen3_5_text", attention_layers=("linear_attention", "full_attention"), mrope=True,
                      image_layout=GRID),
    # Its images become tiles (a thumbnail beside them), each encoded alone: the kept features are the tiles'.
    "internvl": Family(decoder="qwen3", image_layout=ROWS),
    # A prompt's only image is tiled, one among several is not (the processor's batch_num_images): images go to the
    # processor one list per prompt, and features are kept from calls whose prompts have one image each.
    "llava_onevision": Family(PromptStyle(nested_images=True), decoder="qwen2", image_layout=ROWS),
    # Mistral text with a sliding window over every layer (no layer_types: transformers infers sliding_attention).
    "idefics2": Family(decoder="mistral", attention_layers=("sliding_attention",),
                       images_not_kept=("its features come back per prompt, all its images together, from images "
                                        "padded to the batch's largest and to its most images per prompt")),
    # Its processor matches each prompt's images to its placeholders (one list per prompt); its text model mixes
    # sliding-window layers (whose cache keeps only the window) with global ones.
    "gemma3": Family(PromptStyle(nested_images=True), decoder="gemma3_text",
                     attention_layers=("sliding_attention", "full_attention"), image_layout=ROWS),
    # As Gemma 3; its chat template writes the system message's content as is (a string, not a list of parts).
    "gemma4": Family(PromptStyle(nested_images=True, system_text=True), decoder="gemma4_text",
                     attention_layers=("sliding_attention", "full_attention"), image_layout=ROWS),
    # Its processor pads a batch's images to the largest one (image_sizes says each one's size).
    "mistral3": Family(decoder="mistral", image_layout=SIZED_ROWS),
    # Its text model mixes sliding-window and global attention layers; its images become crops (a thumbnail beside
    # them when there are several), each encoded alone: the kept features are the crops'.
    "aya_vision": Family(decoder="cohere2", attention_layers=("sliding_attention", "full_attention"),
                         image_layout=ROWS),
    # Its text model mixes short-convolution layers with attention ones: the convolution zeroes padded positions
    # before it reads them, and its cache (the last 3 positions' inputs per row) is rebatched like keys and values.
    # Its processor takes a list of images per prompt; an image's tiles are its rows, each with its patch mask and
    # grid (pixel_attention_mask, spatial_shapes).
    "lfm2_vl": Family(PromptStyle(nested_images=True), decoder="lfm2", attention_layers=("full_attention", "conv"),
                      image_layout=ROWS),
    # Its text model mixes sliding-window and global attention layers, the last ones reading the keys and values of
    # the earlier ones (KV sharing).
    "gemma3n": Family(decoder="gemma3n_text", attention_layers=("sliding_attention", "full_attention"),
                      image_layout=ROWS),
    # Its chat template writes the system message's content as is (a string, not parts); its images are tiled by
    # shape (a thumbnail and the tiles), so a batch's images may carry different numbers of tiles: the kept features
    # are the tiles'.
    "perception_lm": Family(PromptStyle(system_text=True), decoder="llama", image_layout=ROWS, ragged_tiles=True),
    # As Qwen3-VL, with a routed mixture of experts in every text layer (routing is per token).
    "qwen3_vl_moe": Family(decoder="qwen3_vl_moe_text", mrope=True, image_layout=GRID,
                           image_extras=("deepstack_features",)),
    # As Qwen3.5, each layer's MLP a routed mixture of experts beside a gated shared expert.
    "qwen3_5_moe": Family(decoder="qwen3_5_moe_text", attention_layers=("linear_attention", "full_attention"),
                          mrope=True, image_layout=GRID),
    # Its chat template takes no system role (the system text opens the first user turn) and writes every image
    # first. An image is a low-resolution view and overlapping crops, each encoded alone, its tokens pooling patches
    # of its own crops; image tokens attend to each other both ways (mm_token_type_ids 1; over option tokens 0, text).
    "molmo2": Family(PromptStyle(system_in_user=True), decoder="molmo2_text", image_layout=POOLED),
    # Its text layers mix chunked attention with RoPE (chunks counted from each row's first token, its cache keeping
    # the last chunk) and global attention without positions; each layer's feed-forward is a routed mixture of
    # experts beside a shared one (routing is per token). Its images become tiles (a global tile beside them), each
    # encoded alone; its vision tower's features are its output's last_hidden_state, a row per tile.
    "llama4": Family(decoder="llama4_text", attention_layers=("chunked_attention", "full_attention"),
                     image_layout=ROWS, image_output="last_hidden_state"),
    # Its images reach the text model through cross-attention layers (the cache keeps their keys and values), no image
    # tokens in the text but one <|image|> marker per image; cross_attention_mask says which images and tiles each
    # text token reads, and each appended option token reads what the prompt's last token reads. Tokens that read no
    # image (a row's text before its <|image|>) attend to every image state of their row, blank padding included, so
    # prompts with and without images are batched apart (and its processor fails on a batch whose first prompt has
    # none), and a prompt takes one image (as Llama 3.2 Vision was trained; one image beside two would read the blank
    # image padding it). Its chat template writes the system message's content as is, and refuses one beside images.
    "mllama": Family(PromptStyle(nested_images=True, mixes=False, max_images=1, system_text=True,
                                 no_system_with_images=True),
                     decoder="mllama_text_model", last_row_inputs=("cross_attention_mask",),
                     images_not_kept=("its forward runs its vision tower itself (transformers' Mllama has no "
                                      "get_image_features), and its language model reads the tower's output through "
                                      "cross-attention")),
    # M-RoPE positions as Qwen2-VL's (the processor's mm_token_type_ids mark the image tokens; over option tokens
    # 0, text); an image's patches are its rows of the call, by its grid. Its chat template writes the system
    # message's and earlier turns' content as is (strings, not lists of parts).
    "glm4v": Family(PromptStyle(system_text=True, history_text=True), decoder="glm4v_text", mrope=True,
                    image_layout=GRID),
    # As GLM-4.1V's model, its text model a mixture of experts (a dense first layer, then routed experts beside a
    # shared one; routing is per token).
    "glm4v_moe": Family(decoder="glm4v_moe_text", mrope=True, image_layout=GRID),
    # GLM-4.1V's model under GLM-4.6V's processor and chat template (its text model whichever its config names).
    "glm46v": Family(decoder="glm4v_text", mrope=True, image_layout=GRID),
}

# Text-only causal LMs whose option scoring was checked; any other decoder-only causal LM runs as TEXT_DEFAULT.
TEXT_FAMILIES: dict[str, Family] = {
    "llama": Family(TEXT_STYLE, decoder="llama", placeholder=None),
    "qwen2": Family(TEXT_STYLE, decoder="qwen2", placeholder=None),
}
TEXT_DEFAULT = Family(TEXT_STYLE, option_scoring=REFERENCE, placeholder=None,
                      why_not_batched="its option scoring over a shared prefix is not checked")


def family(model_type: str | None, has_vision: bool = True) -> Family:
    """The family of a model type: a vision-language family, else a checked text family, else TEXT_DEFAULT (text-only
    models, and any type not declared)."""
    if has_vision and model_type in FAMILIES:
        return FAMILIES[model_type]
    return TEXT_FAMILIES.get(model_type or "", TEXT_DEFAULT)


def checked_decoders() -> dict[str, frozenset[str]]:
    """Text decoder model_type -> the attention layer kinds checked under the shared prefix, over every family whose
    options take it."""
    found: dict[str, set[str]] = {}
    for declared in (*FAMILIES.values(), *TEXT_FAMILIES.values()):
        if declared.option_scoring != REFERENCE and declared.decoder:
            found.setdefault(declared.decoder, set()).update(declared.attention_layers)
    return {decoder: frozenset(layers) for decoder, layers in found.items()}
