"""Submission checks against a hand-made offline Hub cache (real huggingface_hub, real safetensors files).

The only stand-in is a tiny object at the HfApi edge (model_info), for what the offline cache cannot say:
gated and private repos, and the Hub's own errors.
"""
from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import numpy as np
import pytest
from safetensors.numpy import save as save_safetensors

from leaderboard.submissions import model_inspection
from leaderboard.submissions.records import CANCELLED, FAILED, FINISHED, PENDING, RUNNING, load, pending_position, save

from leaderboard.submissions.checks import LOCAL_REFUSED, OFFLINE_NOTE, submit as submit_as
from leaderboard.submissions.identity import Visitor

VISITOR = Visitor("tester")  # a signed-in visitor who is not an admin
ADMIN = Visitor("root-admin", admin=True)


def submit(settings, store, model_id, by: Visitor = VISITOR, **kwargs):
    """leaderboard.submissions.checks.submit as a signed-in visitor (the UI takes the visitor from the OAuth session)."""
    return submit_as(settings, store, model_id, by=by, **kwargs)
from tests.hub_cache import LICENSED_CARD, fake_sha, lay_into_hub_cache

HEX40 = re.compile(r"^[0-9a-f]{40}$")

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 64, "hidden_size": 32,
    "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
    "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "bos_token_id": 1, "eos_token_id": 2,
    "tie_word_embeddings": False, "torch_dtype": "float32",
}


def weights(*shapes) -> bytes:
    """A safetensors file with one float32 tensor per shape."""
    return save_safetensors({f"w{i}": np.zeros(shape, dtype=np.float32) for i, shape in enumerate(shapes)})


def make_repo(cache, name, *, config=None, files=None, card=LICENSED_CARD, weight_shapes=((8, 16), (16,)),
              refs=("main",), sha=None) -> str:
    """Lay test-org/<name> into the Hub cache: config.json, model.safetensors, README.md (unless None)."""
    content = {"config.json": json.dumps(LLAMA_CONFIG if config is None else config)}
    if weight_shapes:
        content["model.safetensors"] = weights(*weight_shapes)
    if card is not None:
        content["README.md"] = card
    content.update(files or {})
    return lay_into_hub_cache(cache, f"test-org/{name}", files=content, sha=sha, refs=refs, add_card=False)


@pytest.fixture
def settings(settings):
    """A leaderboard that also asks a benchmark without images, so the text-only models laid here (LLAMA_CONFIG) are
    queued; a text-only model where every benchmark needs images is refused (test_submit_preflight.py)."""
    return settings.with_(benchmarks=("cure", "simpleqa"))


def refused(outcome, store, *words):
    assert not outcome.ok, outcome.message
    assert outcome.request is None
    assert not outcome.duplicate
    for word in words:
        assert word.lower() in outcome.message.lower(), outcome.message
    assert store.list("requests") == []


# ---------------------------------------------------------------- happy paths
def test_tiny_llava_is_queued_at_its_full_sha(settings, store, tiny_llava):
    outcome = submit(settings, store, "tiny-org/tiny-llava", by=Visitor("alice"))
    assert outcome.ok and not outcome.duplicate, outcome.message
    assert outcome.message == f"Queued tiny-org/tiny-llava @ {tiny_llava.sha[:12]} (auto): position 1 in the queue."
    assert outcome.position == 1
    request = outcome.request
    assert request.revision == tiny_llava.sha and request.status == PENDING
    assert request.architecture == "LlavaForConditionalGeneration"
    assert request.source == "hub" and request.submitter == "alice"
    assert OFFLINE_NOTE in request.notes
    stored = load(store, request.path)
    assert stored == request
    assert store.list("requests") == [request.path]


def test_params_counted_from_safetensors_headers(settings, store, tiny_llava):
    from safetensors import safe_open

    expected = 0
    with safe_open(str(tiny_llava.folder / "model.safetensors"), "np") as handle:
        for key in handle.keys():
            expected += int(np.prod(handle.get_slice(key).get_shape()))
    outcome = submit(settings, store, "tiny-org/tiny-llava")
    assert outcome.ok
    assert outcome.request.params_billions == pytest.approx(expected / 1e9)


def test_hand_made_repo_params_and_metadata_skipped(settings, store, hub_cache):
    files = {"model.safetensors": save_safetensors({"a": np.zeros((3, 5), np.float32), "b": np.zeros((), np.float32)},
                                                   metadata={"format": "pt"})}
    make_repo(hub_cache, "counted", files=files)
    outcome = submit(settings, store, "test-org/counted")
    assert outcome.ok, outcome.message
    assert outcome.request.params_billions == pytest.approx(16 / 1e9)


def test_second_model_gets_next_position(settings, store, hub_cache, tiny_llava):
    make_repo(hub_cache, "second")
    first = submit(settings, store, "tiny-org/tiny-llava")
    assert first.position == 1
    outcome = submit(settings, store, "test-org/second", precision="float32")
    # the queue orders by submission time (then path): both positions are distinct and reported as stored
    assert outcome.ok and outcome.position == pending_position(store, outcome.request)
    assert {pending_position(store, first.request), outcome.position} == {1, 2}
    assert f"position {outcome.position} in the queue" in outcome.message
    assert outcome.request.path.endswith("_float32.json")


# ---------------------------------------------------------------- step 1: malformed input
@pytest.mark.parametrize("model_id", ["", "   ", "noslash", "a/b/c", "org/na me", "org/na$me", "org/--x", "org/x..y",
                                      "org/", "org/name.git", "-org/name", "https://huggingface.co/datasets/org/name",
                                      "https://huggingface.co/org/name/blob/main/config.json", "https://hf.co/"])
def test_malformed_model_ids_are_refused(settings, store, model_id):
    outcome = submit(settings, store, model_id)
    refused(outcome, store, "model id")


def test_malformed_id_is_escaped_in_the_message(settings, store):
    outcome = submit(settings, store, "<img src=x onerror=alert(1)>")
    refused(outcome, store, "model id")
    assert "\\<img" in outcome.message and not re.search(r"(?<!\\)[<>]", outcome.message)


def test_bad_precision_model_type_and_revision(settings, store, tiny_llava):
    refused(submit(settings, store, "tiny-org/tiny-llava", precision="int3"), store, "precision", "int3")
    refused(submit(settings, store, "tiny-org/tiny-llava", model_type="magic"), store, "model type", "magic")
    for revision in ["../../etc", "a b", "-x", "main/", "refs..x"]:
        refused(submit(settings, store, "tiny-org/tiny-llava", revision=revision), store, "revision")


def test_a_pasted_hub_url_is_read_as_the_model_id_and_its_revision(settings, store, hub_cache):
    main_sha = make_repo(hub_cache, "pasted", refs=("main",), sha=fake_sha("pasted", "main"))
    dev_sha = make_repo(hub_cache, "pasted", refs=("dev",), sha=fake_sha("pasted", "dev"))
    plain = submit(settings, store, " https://huggingface.co/test-org/pasted/ ")
    assert plain.ok and plain.request.model == "test-org/pasted" and plain.request.revision == main_sha, plain.message
    assert "Queued test-org/pasted @" in plain.message and "https" not in plain.message
    dev = submit(settings, store, "https://huggingface.co/test-org/pasted/tree/dev", precision="float32")
    assert dev.ok and dev.request.revision == dev_sha, dev.message
    same = submit(settings, store, "hf.co/test-org/pasted/tree/dev/", revision="dev", precision="float32")
    assert same.duplicate and same.request.revision == dev_sha
    before = store.list("requests")
    clash = submit(settings, store, "https://huggingface.co/test-org/pasted/tree/dev", revision="main")
    assert not clash.ok and "revision dev" in clash.message and "says main" in clash.message
    assert store.list("requests") == before


# ---------------------------------------------------------------- step 3: the Hub (offline cache)
def test_repo_not_found(settings, store, hub_cache):
    outcome = submit(settings, store, "test-org/does-not-exist")
    refused(outcome, store, "test-org/does-not-exist", "not in the local Hub cache", "offline")


def test_revision_not_found(settings, store, hub_cache):
    make_repo(hub_cache, "revs-missing")
    refused(submit(settings, store, "test-org/revs-missing", revision="nope"), store, "revision nope", "not in the local Hub cache")
    refused(submit(settings, store, "test-org/revs-missing", revision="0" * 40), store, "revision", "not in the local Hub cache")


def test_branch_and_tag_resolve_to_the_full_sha(settings, store, hub_cache):
    main_sha = make_repo(hub_cache, "branches", refs=("main",), sha=fake_sha("branches", "main"))
    dev_sha = make_repo(hub_cache, "branches", refs=("dev",), sha=fake_sha("branches", "dev"))
    tag_sha = make_repo(hub_cache, "branches", refs=("v1.0",), sha=fake_sha("branches", "v1.0"),
                        weight_shapes=((4, 4),))
    assert len({main_sha, dev_sha, tag_sha}) == 3
    dev = submit(settings, store, "test-org/branches", revision="dev")
    assert dev.ok, dev.message
    assert dev.request.revision == dev_sha and HEX40.match(dev.request.revision)
    assert dev_sha[:12] in dev.message and "dev" not in dev.request.path
    tag = submit(settings, store, "test-org/branches", revision="v1.0")
    assert tag.ok and tag.request.revision == tag_sha
    assert tag.request.params_billions == pytest.approx(16 / 1e9)
    default = submit(settings, store, "test-org/branches")
    assert default.ok and default.request.revision == main_sha
    by_sha = submit(settings, store, "test-org/branches", revision=dev_sha)
    assert by_sha.duplicate and by_sha.request.revision == dev_sha
    assert len(store.list("requests")) == 3


# ---------------------------------------------------------------- step 4: code and architecture
def test_remote_code_is_refused(settings, store, hub_cache):
    config = dict(LLAMA_CONFIG, auto_map={"AutoModelForCausalLM": "modeling_x.XForCausalLM"})
    make_repo(hub_cache, "remote-code", config=config, files={"modeling_x.py": "raise SystemExit\n"})
    refused(submit(settings, store, "test-org/remote-code"), store, "trust_remote_code", "never enables")


def test_remote_code_in_tokenizer_config_is_refused(settings, store, hub_cache):
    tok = {"auto_map": {"AutoTokenizer": ["tokenization_x.XTokenizer", None]}}
    make_repo(hub_cache, "remote-tokenizer", files={"tokenizer_config.json": json.dumps(tok)})
    refused(submit(settings, store, "test-org/remote-tokenizer"), store, "trust_remote_code", "tokenizer_config.json")


def test_unsupported_architecture_is_refused(settings, store, hub_cache):
    config = dict(LLAMA_CONFIG, model_type="frobnicator", architectures=["FrobnicatorForCausalLM"])
    make_repo(hub_cache, "unknown-arch", config=config)
    outcome = submit(settings, store, "test-org/unknown-arch")
    refused(outcome, store, "frobnicator", "support")


@pytest.mark.parametrize("model_type, architecture, why", [
    ("fuyu", "FuyuForCausalLM", "not yet verified"),  # its reason, and where the table is
    ("bert", "BertForMaskedLM", "neither a decoder-only causal language model")])
def test_a_known_architecture_without_an_adapter_is_refused_at_submission(settings, store, hub_cache, model_type,
                                                                        architecture, why):
    """transformers knows these, but the evaluator has no tested adapter path: refused now, not mid-run, with the
    reason and the families table named."""
    make_repo(hub_cache, f"known-{model_type}", config=dict(LLAMA_CONFIG, model_type=model_type,
                                                            architectures=[architecture]))
    refused(submit(settings, store, f"test-org/known-{model_type}"), store, "unsupported architecture", architecture,
            why, "docs/models.md")


def test_architecture_check_without_the_evaluator(settings, store, hub_cache, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "evaluator.models", None)  # import fails: transformers' mappings decide
    config = dict(LLAMA_CONFIG, model_type="frobnicator2", architectures=["Frob"])
    make_repo(hub_cache, "unknown-arch-2", config=config)
    refused(submit(settings, store, "test-org/unknown-arch-2"), store, "frobnicator2", "not supported")
    make_repo(hub_cache, "clip-only", config={"model_type": "clip", "architectures": ["CLIPModel"]})
    refused(submit(settings, store, "test-org/clip-only"), store, "clip", "cannot be evaluated")
    make_repo(hub_cache, "llama-ok")
    outcome = submit(settings, store, "test-org/llama-ok")
    assert outcome.ok and outcome.request.architecture == "LlamaForCausalLM"


def test_invalid_config_json_is_refused(settings, store, hub_cache):
    lay_into_hub_cache(hub_cache, "test-org/bad-json", files={"config.json": "{not json", "model.safetensors": weights((2,))})
    refused(submit(settings, store, "test-org/bad-json"), store, "config.json", "not valid JSON")


def test_missing_config_is_refused(settings, store, hub_cache):
    lay_into_hub_cache(hub_cache, "test-org/no-config", files={"model.safetensors": weights((2, 2))})
    refused(submit(settings, store, "test-org/no-config"), store, "config.json")


# ---------------------------------------------------------------- steps 5-7: weights, size, licence
def test_bin_only_weights_are_refused(settings, store, hub_cache):
    make_repo(hub_cache, "bin-only", weight_shapes=(), files={"pytorch_model.bin": b"\x80\x02not really"})
    refused(submit(settings, store, "test-org/bin-only"), store, "safetensors", "only .bin", "pytorch_model.bin")


def test_no_weights_at_all_are_refused(settings, store, hub_cache):
    make_repo(hub_cache, "no-weights", weight_shapes=())
    refused(submit(settings, store, "test-org/no-weights"), store, "safetensors", "no weight files")


def test_too_many_parameters_are_refused(settings, store, hub_cache):
    make_repo(hub_cache, "too-big", weight_shapes=((32, 64),))  # 2,048 parameters
    small = settings.with_(max_params_billions=1e-6)          # 1,000 parameters
    outcome = submit(small, store, "test-org/too-big")
    refused(outcome, store, "2,048", "limit", "1e-06B")
    assert submit(settings, store, "test-org/too-big").ok  # the default limit lets it through


def test_card_without_licence_is_refused(settings, store, hub_cache):
    make_repo(hub_cache, "no-licence", card="---\ntags:\n- vision\n---\n# A model without a licence\n")
    refused(submit(settings, store, "test-org/no-licence"), store, "licence", "license:")


def test_missing_card_is_refused(settings, store, hub_cache):
    make_repo(hub_cache, "no-card", card=None)
    refused(submit(settings, store, "test-org/no-card"), store, "no model card", "licence")


def test_unparseable_card_metadata_counts_as_no_licence(settings, store, hub_cache):
    make_repo(hub_cache, "bad-card", card="---\nlicense: [unclosed\n---\n# x\n")
    refused(submit(settings, store, "test-org/bad-card"), store, "licence")


# ---------------------------------------------------------------- steps 8-10: queue state
def test_duplicate_is_answered_with_the_existing_request(settings, store, tiny_llava):
    first = submit(settings, store, "tiny-org/tiny-llava", by=Visitor("alice"))
    again = submit(settings, store, "tiny-org/tiny-llava", revision=tiny_llava.sha, by=Visitor("bob"))
    assert again.ok and again.duplicate
    assert again.request.path == first.request.path and again.request.submitter == "alice"
    assert again.position == 1
    assert "already" in again.message and PENDING in again.message and "position 1" in again.message
    assert store.list("requests") == [first.request.path]
    assert load(store, first.request.path) == first.request  # unchanged


@pytest.mark.parametrize("status", [RUNNING, FINISHED])
def test_duplicate_of_running_or_finished(settings, store, tiny_llava, status):
    first = submit(settings, store, "tiny-org/tiny-llava").request
    first.status = status
    save(store, first)
    again = submit(settings, store, "tiny-org/tiny-llava")
    assert again.ok and again.duplicate and again.position == 0
    assert status in again.message and "position" not in again.message
    assert load(store, first.path).status == status


def test_a_finished_model_whose_weights_left_the_cache_is_answered_as_a_duplicate(settings, store, hub_cache):
    """The duplicate is looked up before the model's files are: an evaluated model says so, not a cache refusal."""
    sha = make_repo(hub_cache, "evaluated-then-deleted")
    first = submit(settings, store, "test-org/evaluated-then-deleted").request
    first.status = FINISHED
    save(store, first)
    snapshot = hub_cache / "models--test-org--evaluated-then-deleted" / "snapshots" / sha
    (snapshot / "model.safetensors").unlink()  # the weights alone gone: inspection would find no safetensors
    again = submit(settings, store, "test-org/evaluated-then-deleted", by=Visitor("bob"))
    assert again.ok and again.duplicate and again.request.path == first.path, again.message
    assert again.message == f"test-org/evaluated-then-deleted @ {sha[:12]} (auto) was already submitted and is FINISHED."
    shutil.rmtree(hub_cache / "models--test-org--evaluated-then-deleted")  # the whole model gone from the cache
    pinned = submit(settings, store, "test-org/evaluated-then-deleted", revision=sha, by=Visitor("bob"))
    assert pinned.ok and pinned.duplicate and pinned.request.path == first.path, pinned.message
    assert "already submitted and is FINISHED." in pinned.message and "Hub" not in pinned.message
    for revision in ("", "main", sha[:7]):  # which commit it names is unknown offline: the newest request answers
        unpinned = submit(settings, store, "test-org/evaluated-then-deleted", revision=revision, by=Visitor("bob"))
        assert unpinned.ok and unpinned.duplicate and unpinned.request.path == first.path, unpinned.message
        assert "could not say which commit" in unpinned.message
    other = submit(settings, store, "test-org/evaluated-then-deleted", revision="f" * 40)  # another commit: no answer
    assert not other.ok and not other.duplicate and "not in the local Hub cache" in other.message, other.message
    assert store.list("requests") == [first.path] and load(store, first.path).status == FINISHED


@pytest.mark.parametrize("status", [FAILED, CANCELLED])
def test_failed_or_cancelled_request_can_be_resubmitted(settings, store, tiny_llava, status):
    first = submit(settings, store, "tiny-org/tiny-llava").request
    first.status, first.error, first.attempts = status, "boom", 3
    save(store, first)
    again = submit(settings, store, "tiny-org/tiny-llava", by=Visitor("carol"))
    assert again.ok and not again.duplicate, again.message
    stored = load(store, first.path)
    assert stored.status == PENDING and stored.error is None and stored.attempts == 0 and stored.submitter == "carol"
    assert again.position == 1 and store.list("requests") == [first.path]


def test_rate_limit_per_submitter(settings, store, hub_cache):
    for name in ("rate-a", "rate-b", "rate-c"):
        make_repo(hub_cache, name)
    limited = settings.with_(max_pending_per_user=2)
    assert submit(limited, store, "test-org/rate-a", by=Visitor("dave")).ok
    assert submit(limited, store, "test-org/rate-b", by=Visitor("dave")).ok
    outcome = submit(limited, store, "test-org/rate-c", by=Visitor("dave"))
    assert not outcome.ok and "pending" in outcome.message and "2" in outcome.message
    assert len(store.list("requests")) == 2
    assert submit(limited, store, "test-org/rate-a", by=Visitor("dave")).duplicate  # asking again is not refused
    assert submit(limited, store, "test-org/rate-c", by=Visitor("erin")).ok


def test_signed_out_visitors_cannot_submit(settings, store, tiny_llava):
    refused(submit(settings, store, "tiny-org/tiny-llava", by=Visitor()), store, "sign in")


def test_pending_limit_counts_each_person_apart_and_admins_have_none(settings, store, hub_cache):
    for name in ("lim-a", "lim-b", "lim-c"):
        make_repo(hub_cache, name)
    limited = settings.with_(max_pending_per_user=1)
    assert submit(limited, store, "test-org/lim-a", by=Visitor("ann")).ok
    outcome = submit(limited, store, "test-org/lim-b", by=Visitor("ann"))
    refused_now = not outcome.ok and "1 pending request(s)" in outcome.message and "starts running" in outcome.message
    assert refused_now, outcome.message
    assert submit(limited, store, "test-org/lim-b", by=Visitor("ben")).ok
    assert submit(limited, store, "test-org/lim-c", by=Visitor("ann", admin=True)).ok


def test_weekly_limit_says_when_the_next_place_frees_up(settings, store, hub_cache):
    for name in ("week-a", "week-b", "week-c"):
        make_repo(hub_cache, name)
    weekly = settings.with_(max_submissions_per_week=2, max_pending_per_user=10)
    first = submit(weekly, store, "test-org/week-a", by=Visitor("cat")).request
    old = load(store, first.path)
    old.submitted_time, old.status = "2026-01-01T10:00:00+00:00", FINISHED  # long ago: outside the window
    save(store, old)
    assert submit(weekly, store, "test-org/week-b", by=Visitor("cat")).ok
    second = load(store, store.list("requests/test-org/week-b")[0])
    second.submitted_time, second.status = (datetime.now(timezone.utc) - timedelta(days=6)).isoformat(), FINISHED
    save(store, second)
    third = submit(weekly, store, "test-org/week-c", by=Visitor("cat"))
    assert third.ok, third.message  # one in the window: a place is free
    again = submit(weekly, store, "test-org/week-c", precision="float32", by=Visitor("cat"))
    assert not again.ok and "in the last 7 days" in again.message and "(2)" in again.message
    frees = (datetime.fromisoformat(second.submitted_time) + timedelta(days=7)).strftime("%Y-%m-%d %H:%M UTC")
    assert frees in again.message, again.message


def test_org_limit_is_optional_and_counts_every_submitter(settings, store, hub_cache):
    for name in ("org-a", "org-b"):
        make_repo(hub_cache, name)
    assert submit(settings.with_(max_pending_per_org=1), store, "test-org/org-a", by=Visitor("dan")).ok
    outcome = submit(settings.with_(max_pending_per_org=1), store, "test-org/org-b", by=Visitor("eve"))
    assert not outcome.ok and "organisation test-org" in outcome.message
    assert submit(settings, store, "test-org/org-b", by=Visitor("eve")).ok  # 0: no limit per organisation


def test_every_configured_secret_is_scrubbed_from_the_echo(settings, store, hub_cache, online):
    judge_secret = "sk-judge-" + "Zq9" * 8
    with_secrets = settings.with_(hf_token=TOKEN, judge_token=judge_secret)
    for outcome in (submit(with_secrets, store, f"org/{judge_secret[:40]}x"),
                    submit(with_secrets, store, "org/x", api=FakeApi(error=RuntimeError(f"key {judge_secret}"))),
                    submit(with_secrets, store, "org/x", revision=judge_secret),
                    submit(with_secrets, store, "org/x", precision=judge_secret)):
        assert not outcome.ok
        assert judge_secret not in outcome.message and "Zq9Zq9" not in outcome.message, outcome.message


# ---------------------------------------------------------------- local folders
def test_local_folder_accepted_when_allowed(settings, store, tiny_llava, monkeypatch):
    local = settings.with_(allow_local_models=True)
    outcome = submit(local, store, str(tiny_llava.folder), by=ADMIN)
    assert outcome.ok, outcome.message
    request = outcome.request
    assert request.model == f"local/{tiny_llava.folder.name}" and request.source == "local"
    assert request.local_path == str(tiny_llava.folder.resolve())
    assert HEX40.match(request.revision) and request.revision == model_inspection.folder_sha(tiny_llava.folder)
    assert request.architecture == "LlavaForConditionalGeneration" and request.params_billions > 0
    monkeypatch.chdir(tiny_llava.folder.parent)
    again = submit(local, store, f"./{tiny_llava.folder.name}", by=ADMIN)
    assert again.duplicate and again.request.path == request.path


def test_local_folder_refused_when_disabled(settings, store, tiny_llava):
    outcome = submit(settings.with_(allow_local_models=False), store, str(tiny_llava.folder), by=ADMIN)
    refused(outcome, store, LOCAL_REFUSED)


def test_local_folder_without_config_is_refused(settings, store, tmp_path):
    (tmp_path / "empty").mkdir()
    local = settings.with_(allow_local_models=True)
    refused(submit(local, store, str(tmp_path / "empty"), by=ADMIN), store, "config.json")
    refused(submit(local, store, str(tmp_path / "missing"), by=ADMIN), store, "does not exist")


def test_local_folders_are_for_admins_with_one_message_whatever_the_path(settings, store, tiny_llava, tmp_path):
    """A visitor who is not an admin cannot tell an existing folder from a missing one, or probe /etc."""
    local = settings.with_(allow_local_models=True)
    for path in (str(tiny_llava.folder), str(tmp_path / "missing"), "/etc", "/nonexistent-dir", "../../etc"):
        outcome = submit(local, store, path, by=VISITOR)
        refused(outcome, store)
        assert outcome.message == LOCAL_REFUSED


def test_local_folders_only_under_the_models_root(settings, store, tiny_llava, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(tiny_llava.folder, root / "llava")
    local = settings.with_(allow_local_models=True, local_models_root=root)
    outside = tmp_path / "outside"
    (outside / "model").mkdir(parents=True)
    (outside / "model" / "config.json").write_text("{}")
    for path in (str(outside / "model"), str(outside / "missing"), "/etc", f"{root}/../{outside.name}/model",
                 "/nonexistent-dir"):
        outcome = submit(local, store, path, by=ADMIN)
        refused(outcome, store)
        assert outcome.message == LOCAL_REFUSED, path
    link = root / "link-out"
    link.symlink_to(outside / "model")  # a link inside the root to a folder outside it is outside
    assert submit(local, store, str(link), by=ADMIN).message == LOCAL_REFUSED
    assert submit(local, store, str(tiny_llava.folder), by=ADMIN).message == LOCAL_REFUSED
    assert submit(local, store, str(root / "llava"), by=ADMIN).ok


def test_folder_sha_changes_with_content(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    before = model_inspection.folder_sha(tmp_path)
    (tmp_path / "config.json").write_text('{"a": 1}')
    assert HEX40.match(before) and model_inspection.folder_sha(tmp_path) != before


# ---------------------------------------------------------------- the online path: a stand-in for HfApi
class FakeApi:
    """What HfApi.model_info answers (or raises); the Hub itself cannot be reached from tests."""

    def __init__(self, info=None, error=None):
        self.info, self.error, self.calls = info, error, []

    def model_info(self, repo_id, revision=None, files_metadata=False):
        self.calls.append((repo_id, revision))
        if self.error is not None:
            raise self.error
        return self.info


def info_for(model, *, gated=False, private=False, total=None):
    return SimpleNamespace(id=model.repo_id, sha=model.sha, gated=gated, private=private, card_data=None,
                           siblings=[SimpleNamespace(rfilename=p.relative_to(model.folder).as_posix())
                                     for p in model.folder.rglob("*") if p.is_file()] + [SimpleNamespace(rfilename="README.md")],
                           safetensors=SimpleNamespace(total=total) if total is not None else None)


@pytest.fixture
def online(monkeypatch):
    monkeypatch.setattr(model_inspection, "OFFLINE", False)


def http_error(cls, status, text="error"):
    import httpx2

    response = httpx2.Response(status, request=httpx2.Request("GET", "https://huggingface.co/api/models/x"))
    return cls(text, response=response)


def test_online_gated_is_refused(settings, store, tiny_llava, online):
    api = FakeApi(info_for(tiny_llava, gated="auto"))
    refused(submit(settings, store, "tiny-org/tiny-llava", api=api), store, "gated")
    assert api.calls == [("tiny-org/tiny-llava", None)]


def test_online_gated_error_is_refused(settings, store, online):
    from huggingface_hub.errors import GatedRepoError

    api = FakeApi(error=http_error(GatedRepoError, 403))
    refused(submit(settings, store, "test-org/gated", api=api), store, "gated")


def test_online_private_is_refused(settings, store, tiny_llava, online):
    refused(submit(settings, store, "tiny-org/tiny-llava", api=FakeApi(info_for(tiny_llava, private=True))), store, "private")


def test_online_repo_not_found(settings, store, online):
    from huggingface_hub.errors import RepositoryNotFoundError

    api = FakeApi(error=http_error(RepositoryNotFoundError, 404))
    refused(submit(settings, store, "test-org/nowhere", api=api), store, "test-org/nowhere", "not found")


def test_online_revision_not_found(settings, store, online):
    from huggingface_hub.errors import RevisionNotFoundError

    api = FakeApi(error=http_error(RevisionNotFoundError, 404))
    refused(submit(settings, store, "test-org/somewhere", revision="v9", api=api), store, "revision v9", "not found")
    assert api.calls == [("test-org/somewhere", "v9")]


def test_online_hub_unreachable(settings, store, online):
    import httpx2

    refused(submit(settings, store, "test-org/far", api=FakeApi(error=httpx2.ConnectError("no route"))), store,
            "could not be reached")


def test_online_accepts_a_public_model(settings, store, tiny_llava, online):
    # files come through hf_hub_download at the pinned sha (served by the offline cache here)
    api = FakeApi(info_for(tiny_llava, total=123_456))
    outcome = submit(settings, store, "tiny-org/tiny-llava", revision="main", api=api)
    assert outcome.ok, outcome.message
    assert outcome.request.revision == tiny_llava.sha
    assert outcome.request.params_billions == pytest.approx(123_456 / 1e9)
    assert OFFLINE_NOTE not in outcome.request.notes
    assert api.calls == [("tiny-org/tiny-llava", "main")]


# ---------------------------------------------------------------- tokens
TOKEN = "hf_" + "SeCrEt" * 6


def test_token_never_in_messages(settings, store, hub_cache, online):
    with_token = settings.with_(hf_token=TOKEN)
    outcomes = [
        submit(with_token, store, TOKEN),
        submit(with_token, store, f"org/{TOKEN}", api=FakeApi(error=RuntimeError(f"bad header Bearer {TOKEN}"))),
        submit(with_token, store, "org/x", api=FakeApi(error=ConnectionError(f"token={TOKEN}"))),
        submit(with_token, store, "org/x", precision=TOKEN),
    ]
    for outcome in outcomes:
        assert not outcome.ok
        assert TOKEN not in outcome.message and "SeCrEtSeCrEt" not in outcome.message, outcome.message
    assert store.list("requests") == []


def test_token_never_in_offline_messages(settings, store, hub_cache):
    outcome = submit(settings.with_(hf_token=TOKEN), store, f"org/{TOKEN}")
    refused(outcome, store, "not in the local Hub cache")
    assert TOKEN not in outcome.message
