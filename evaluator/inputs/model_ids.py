"""The one rule for a Hub model id (org/name), used by the CLI and, through evaluator.api, the Submit tab."""
from __future__ import annotations

from typing import Callable

EXAMPLE_ID = "HuggingFaceTB/SmolVLM-256M-Instruct"


def model_id_problem(model_id: str, shown: Callable[[str], str] = repr) -> str | None:
    """Why `model_id` is no Hub model id of the form org/name, in one sentence that writes the id as `shown` does
    (the Submit tab escapes it for Markdown); None when it is one."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if not model_id:
        return f"Please enter a model id in the form org/name (for example `{EXAMPLE_ID}`)."
    name = shown(model_id)
    if any(ch.isspace() for ch in model_id):
        return f"The model id {name} contains spaces; a Hub model id looks like org/name."
    if model_id.count("/") != 1 or model_id.startswith("/") or model_id.endswith("/"):
        return f"The model id {name} is not of the form org/name."
    try:
        validate_repo_id(model_id)
    except HFValidationError:
        return (f"The model id {name} is not a valid Hub model id: use org/name with letters, digits, "
                "'-', '_' and '.' only (no '--' or '..').")
    if model_id.endswith(".git"):
        return f"The model id {name} is not a valid Hub model id."
    return None
