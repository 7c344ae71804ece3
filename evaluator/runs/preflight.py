"""What a run's configuration already tells, said before any model loads, each in one line of our own:

- a benchmark that needs a judge, with no judge named, or with one that cannot be had without a call: a malformed
  spec, or a local judge whose Hub id is not in the cache while the Hub is off (evaluator.judge.judge_problem);
- `--device cuda` where no GPU is usable (evaluator.models.devices says what was found);
- a Hub model that is not in this machine's Hugging Face cache while the Hub cannot be reached (HF_HUB_OFFLINE=1),
  or that the Hub does not have, or keeps gated from this token;
- a model whose config.json says it cannot be run (remote code, an architecture no adapter runs), or whose
  config.json or generation_config.json cannot be read as they should be (evaluator.models.model_config);
- a text-only model (its config.json has no vision part) asked only for benchmarks that need images: nothing would
  run. (Asked for some that do not, the image ones are skipped after the load, as before, with the reason.)

Only config.json and generation_config.json are fetched (or read from the cache) here; the weights come with the
load. A served model's spec is checked by evaluator.endpoints.names and its probe, not here.
"""
from __future__ import annotations

import os
from pathlib import Path

from evaluator.benchmarks import REGISTRY, get_benchmark
from evaluator.endpoints.names import is_model_spec
from evaluator.judge.spec import judge_problem
from evaluator.models.base import UnsupportedModelError


# the end of a queue request's one line (`run --request`) when it was refused before the run began: what its
# configuration told, before any model loaded; the Space does not count such a FAILED request toward a person's limit
NOTHING_RAN = "(refused before the run: nothing was loaded)"


class Refused(ValueError):
    """A run that cannot do what was asked, known from its configuration alone: its one line."""


def needs_judge(benchmarks: tuple[str, ...] | list[str], judge: str) -> None:
    """Refused when a benchmark asked for needs a judge and none is named."""
    needing = [name for name in benchmarks if name in REGISTRY and get_benchmark(name).CARD.needs_judge]
    if needing and not (judge or "").strip():
        raise Refused(f"{', '.join(needing)} needs a judge: set LEADERBOARD_JUDGE or pass --judge "
                      "(endpoint:<base url>|<model> or local:<model>)")
    problem = judge_problem(judge) if needing else None
    if problem:
        raise Refused(f"--judge (LEADERBOARD_JUDGE): {problem}")


def images_needed(benchmarks: tuple[str, ...] | list[str], has_vision: bool) -> list[str]:
    """The benchmarks asked for that need image input when a model without a vision part (`has_vision` False) is
    asked for those alone, so that nothing would run; [] otherwise (a model that sees, or one benchmark without
    images among them)."""
    image_only = [name for name in benchmarks if name in REGISTRY and get_benchmark(name).CARD.needs_images]
    return image_only if not has_vision and image_only and len(image_only) == len(benchmarks) else []


def config_folder(model: str, revision: str | None) -> Path:
    """The folder holding the model's config.json: a local folder as is; for a Hub id, config.json fetched at
    `revision` (or read from the cache), and its generation_config.json beside it where it has one. Refused, in our
    words, when config.json cannot be had."""
    local = Path(model).expanduser()
    if local.is_dir():
        return local
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (EntryNotFoundError, GatedRepoError, LocalEntryNotFoundError,
                                        OfflineModeIsEnabled, RepositoryNotFoundError, RevisionNotFoundError)

    at = f" at revision {revision[:12]}" if revision else ""
    try:
        folder = Path(hf_hub_download(model, "config.json", revision=revision)).parent
    except GatedRepoError:
        raise Refused(f"{model} is gated and this machine's token (HF_TOKEN) has no access to it") from None
    except RepositoryNotFoundError:
        raise Refused(f"{model} was not found on the Hugging Face Hub (or it is private to another account)") \
            from None
    except RevisionNotFoundError:
        raise Refused(f"{model} has no revision {revision!r} on the Hub") from None
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):  # before EntryNotFoundError: a subclass of it
        cache = os.environ.get("HF_HUB_CACHE") or os.environ.get("HF_HOME") or "~/.cache/huggingface"
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
        why = "the Hub is off (HF_HUB_OFFLINE=1)" if offline else "the Hub could not be reached"
        raise Refused(f"{model}{at} is not in this machine's Hugging Face cache ({cache}) and {why}: download it once "
                      "with the Hub reachable, or give a local model folder") from None
    except EntryNotFoundError:
        raise Refused(f"{model}{at} has no config.json: not a transformers model this leaderboard can run") from None
    try:  # where the model has none (or it cannot be had now), the load goes on without it, as transformers does
        hf_hub_download(model, "generation_config.json", revision=revision)
    except (EntryNotFoundError, OSError, ValueError):
        pass
    return folder


def check(model: str, revision: str | None, benchmarks: tuple[str, ...] | list[str], judge: str,
          device: str = "auto") -> None:
    """Everything above, in that order, after `--device cuda` on a machine without a usable GPU (DeviceUnavailable,
    with what was found); Refused (or UnsupportedModelError) with one line, else nothing."""
    needs_judge(benchmarks, judge)
    if is_model_spec(model):
        return
    if device == "cuda":
        from evaluator.models.devices import resolve_device

        resolve_device("cuda")
    from evaluator.models.architectures import describe_model_folder

    facts = describe_model_folder(config_folder(model, revision))  # UnsupportedModelError: remote code, unknown
    image_only = images_needed(benchmarks, bool(facts.get("has_vision")))
    if image_only:
        raise Refused(f"{model} is text-only (its config.json: {facts.get('architecture') or facts.get('model_type')},"
                      f" no vision part) and {', '.join(image_only)} need{'s' if len(image_only) == 1 else ''} image "
                      f"input: nothing would run; ask for one without images ({', '.join(_text_benchmarks())})")


def _text_benchmarks() -> list[str]:
    return [name for name in REGISTRY if not get_benchmark(name).CARD.needs_images]


__all__ = ["NOTHING_RAN", "Refused", "UnsupportedModelError", "check", "config_folder", "images_needed", "needs_judge"]
