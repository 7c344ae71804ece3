"""Which architectures vLLM serves for generation, as its supported-models list says for the pinned version: the HF
`architectures` class names of its "Text Generation" tables (text-only and multimodal), with the caveats the list
gives. served_by_vllm() answers yes or no; vllm_note() is the families table's vLLM cell (docs/models.md).

Read from vLLM's docs/models/supported_models.md at the tag v0.11.0 (commit VLLM_COMMIT): the lists below are its
tables copied, not guessed. An architecture it does not list may still load through vLLM's Transformers backend;
the list does not vouch for that, so neither does this table.
"""
from __future__ import annotations

VLLM_VERSION = "0.11.0"
VLLM_IMAGE = f"vllm/vllm-openai:v{VLLM_VERSION}"  # the published image the version is read for
VLLM_COMMIT = "b8b302cde434df8c9289a2b465406b47ebab1c2d"  # what the tag v0.11.0 names
SOURCE = f"https://github.com/vllm-project/vllm/blob/v{VLLM_VERSION}/docs/models/supported_models.md"
DOCS_PAGE = f"https://docs.vllm.ai/en/v{VLLM_VERSION}/models/supported_models.html"

# "List of Text-only Language Models" > "Text Generation", both tables (the second, SmolLM3, through the
# Transformers backend), each with its V1 column ticked.
TEXT_GENERATION: frozenset[str] = frozenset({
    "ApertusForCausalLM", "AquilaForCausalLM", "ArceeForCausalLM", "ArcticForCausalLM", "BaiChuanForCausalLM",
    "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "BambaForCausalLM", "BloomForCausalLM",
    "ChatGLMForConditionalGeneration", "ChatGLMModel", "Cohere2ForCausalLM", "CohereForCausalLM",
    "DbrxForCausalLM", "DeciLMForCausalLM", "DeepseekForCausalLM", "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM", "Dots1ForCausalLM", "DotsOCRForCausalLM", "Ernie4_5ForCausalLM",
    "Ernie4_5_MoeForCausalLM", "Exaone4ForCausalLM", "ExaoneForCausalLM", "Fairseq2LlamaForCausalLM",
    "FalconForCausalLM", "FalconH1ForCausalLM", "FalconMambaForCausalLM", "GPT2LMHeadModel",
    "GPTBigCodeForCausalLM", "GPTJForCausalLM", "GPTNeoXForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM",
    "Gemma3nForCausalLM", "GemmaForCausalLM", "Glm4ForCausalLM", "Glm4MoeForCausalLM", "GlmForCausalLM",
    "GptOssForCausalLM", "GraniteForCausalLM", "GraniteMoeForCausalLM", "GraniteMoeHybridForCausalLM",
    "GraniteMoeSharedForCausalLM", "GritLM", "Grok1ModelForCausalLM", "HCXVisionForCausalLM",
    "HunYuanDenseV1ForCausalLM", "HunYuanMoEV1ForCausalLM", "InternLM2ForCausalLM", "InternLM3ForCausalLM",
    "InternLMForCausalLM", "JAISLMHeadModel", "JambaForCausalLM", "Lfm2ForCausalLM", "LlamaForCausalLM",
    "LongcatFlashForCausalLM", "MPTForCausalLM", "Mamba2ForCausalLM", "MambaForCausalLM", "MiMoForCausalLM",
    "MiniCPM3ForCausalLM", "MiniCPMForCausalLM", "MiniMaxM1ForCausalLM", "MiniMaxText01ForCausalLM",
    "MistralForCausalLM", "MixtralForCausalLM", "NemotronForCausalLM", "NemotronHForCausalLM",
    "OLMo2ForCausalLM", "OLMo3ForCausalLM", "OLMoEForCausalLM", "OLMoForCausalLM", "OPTForCausalLM",
    "OrionForCausalLM", "PersimmonForCausalLM", "Phi3ForCausalLM", "PhiForCausalLM", "PhiMoEForCausalLM",
    "Plamo2ForCausalLM", "QWenLMHeadModel", "Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM", "SeedOssForCausalLM", "SmolLM3ForCausalLM",
    "SolarForCausalLM", "StableLmForCausalLM", "Starcoder2ForCausalLM", "TeleChat2ForCausalLM",
    "TeleFLMForCausalLM", "XverseForCausalLM", "Zamba2ForCausalLM",
})

# "List of Multimodal Language Models" > "Text Generation", both tables (the second, Emu3, through the
# Transformers backend); every row has its V1 column ticked or marked with a warning (CAUSAL_IMAGE_ATTENTION).
MULTIMODAL_GENERATION: frozenset[str] = frozenset({
    "AriaForConditionalGeneration", "AyaVisionForConditionalGeneration", "Blip2ForConditionalGeneration",
    "ChameleonForConditionalGeneration", "Cohere2VisionForConditionalGeneration", "DeepseekVLV2ForCausalLM",
    "Emu3ForConditionalGeneration", "Ernie4_5_VLMoeForConditionalGeneration", "FuyuForCausalLM",
    "GLM4VForCausalLM", "Gemma3ForConditionalGeneration", "Gemma3nForConditionalGeneration",
    "Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration",
    "GraniteSpeechForConditionalGeneration", "H2OVLChatModel", "Idefics3ForConditionalGeneration",
    "InternS1ForConditionalGeneration", "InternVLChatModel", "InternVLForConditionalGeneration",
    "KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration", "KimiVLForConditionalGeneration",
    "Llama4ForConditionalGeneration", "Llama_Nemotron_Nano_VL", "LlavaForConditionalGeneration",
    "LlavaNextForConditionalGeneration", "LlavaNextVideoForConditionalGeneration",
    "LlavaOnevisionForConditionalGeneration", "MiDashengLMModel", "MiniCPMO", "MiniCPMV",
    "MiniMaxVL01ForConditionalGeneration", "Mistral3ForConditionalGeneration", "MolmoForCausalLM",
    "NVLM_D_Model", "Ovis", "Ovis2_5", "PaliGemmaForConditionalGeneration", "Phi3VForCausalLM",
    "Phi4MMForCausalLM", "Phi4MultimodalForCausalLM", "PixtralForConditionalGeneration",
    "Qwen2AudioForConditionalGeneration", "Qwen2VLForConditionalGeneration",
    "Qwen2_5OmniThinkerForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration",
    "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration", "QwenVLForConditionalGeneration",
    "RForConditionalGeneration", "SkyworkR1VChatModel", "SmolVLMForConditionalGeneration",
    "Step3VLForConditionalGeneration", "Tarsier2ForConditionalGeneration", "TarsierForConditionalGeneration",
})

SERVED: frozenset[str] = TEXT_GENERATION | MULTIMODAL_GENERATION

# Listed in the text-only table with an empty V1 column: the V0 engine alone, so not counted as served.
V0_ONLY: frozenset[str] = frozenset({"MotifForCausalLM", "Phi4FlashForCausalLM"})

# The two tables the list says it supports "only via the Transformers backend".
TRANSFORMERS_BACKEND: frozenset[str] = frozenset({"SmolLM3ForCausalLM", "Emu3ForConditionalGeneration"})

# Marked ^: the HF config's architecture must be renamed to this one with --hf-overrides.
HF_OVERRIDES: frozenset[str] = frozenset({"DeepseekVLV2ForCausalLM", "GLM4VForCausalLM",
                                          "QwenVLForConditionalGeneration", "Tarsier2ForConditionalGeneration"})

# Inputs "T + I" or "T + I^E" without the +: one image a prompt.
ONE_IMAGE: frozenset[str] = frozenset({
    "Blip2ForConditionalGeneration", "ChameleonForConditionalGeneration", "Emu3ForConditionalGeneration",
    "FuyuForCausalLM", "GLM4VForCausalLM", "Gemma3nForConditionalGeneration", "Idefics3ForConditionalGeneration",
    "PaliGemmaForConditionalGeneration", "SkyworkR1VChatModel", "SmolVLMForConditionalGeneration",
})

# Multimodal rows whose inputs are audio or video, never an image.
NO_IMAGE: frozenset[str] = frozenset({"GraniteSpeechForConditionalGeneration", "LlavaNextVideoForConditionalGeneration",
                                      "MiDashengLMModel", "Qwen2AudioForConditionalGeneration"})

# V1 column marked with a warning: its engine attends causally over image tokens, where the model attends
# bidirectionally within an image, so text-with-image answers may differ from the model's own.
CAUSAL_IMAGE_ATTENTION: frozenset[str] = frozenset({"Gemma3ForConditionalGeneration",
                                                    "PaliGemmaForConditionalGeneration"})

# Why a family's architecture is not in this version's list, where that is known. "A later vLLM lists it": the
# newest list read (vllm-project/vllm main at 0046f770d322e202c2000e325a0c8cc1fcb2fc76) has the row.
LATER = "a later vLLM lists it"
NOT_LISTED: dict[str, str] = {
    "Gemma4ForConditionalGeneration": LATER,
    "Lfm2VlForConditionalGeneration": LATER,
    "MllamaForConditionalGeneration": "dropped before this version with V0's encoder-decoder support (vllm#24907); "
                                      "earlier lists had it for V0 only",
    "Molmo2ForConditionalGeneration": LATER,
    "Qwen3_5ForConditionalGeneration": LATER,
    "Qwen3_5MoeForConditionalGeneration": LATER,
}


def served_by_vllm(architecture: str | None) -> bool | None:
    """Whether the pinned vLLM lists the architecture (an HF `architectures` class name) for generation on its V1
    engine: True or False, None without a name."""
    if not isinstance(architecture, str) or not architecture:
        return None
    return architecture in SERVED


def vllm_caveats(architecture: str) -> tuple[str, ...]:
    """The list's caveats for a served architecture, in words (empty when it gives none)."""
    said = []
    if architecture in TRANSFORMERS_BACKEND:
        said.append("through vLLM's Transformers backend")
    if architecture in HF_OVERRIDES:
        said.append("its architecture renamed with --hf-overrides")
    if architecture in NO_IMAGE:
        said.append("no image input")
    if architecture in ONE_IMAGE:
        said.append("one image a prompt")
    if architecture in CAUSAL_IMAGE_ATTENTION:
        said.append("image tokens attend causally, not bidirectionally as in the model")
    return tuple(said)


def vllm_note(architecture: str | None) -> str:
    """The families table's vLLM cell: "yes", "yes; <caveats>", "no", "no; <why>", or "—" without a name."""
    served = served_by_vllm(architecture)
    if served is None:
        return "—"
    if served:
        return "; ".join(("yes",) + vllm_caveats(architecture))
    if architecture in V0_ONLY:
        return "no; listed for the V0 engine only"
    why = NOT_LISTED.get(architecture)
    return f"no; {why}" if why else "no"
