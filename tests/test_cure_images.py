"""CURE images from the Visual Genome and VCR releases (LEADERBOARD_CURE_IMAGES): every URL of the real file maps to
a release path, other URLs are refused, and a run reads the images from the folder (local or hf://), never from
the URLs; a missing file makes its instance image_unavailable with the expected path."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from evaluator.benchmarks import get_benchmark
from evaluator.benchmarks.cure import CARD, data, explore
from evaluator.benchmarks.cure.images import SETTING, SOURCE, release_path, release_ref, resolve_images
from evaluator.benchmarks.spec import PlanContext
from evaluator.inputs import images as image_fetch
from evaluator.inputs.images import ImageUnavailable
from evaluator.models.base import OptionScore
from tests.benchmark_runs import run_benchmark

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "cure" / "cot_consistency_eval.jsonl"
needs_real = pytest.mark.skipif(
    not REAL.is_file(), reason=f"real CURE data not found at {REAL} (tests read it from ../shared/data; not shipped)")

VG = "https://cs.stanford.edu/people/rak248"
VCR = "http://s3-us-west-2.amazonaws.com/ai2-rowanz/vcr1images"
# (URL, its release path, the colour of the file written there; None: the file is missing)
IMAGES = [
    (f"{VG}/VG_100K/2371570.jpg", "VG_100K/2371570.jpg", (0, 160, 0)),
    (f"{VG}/VG_100K_2/2378438.jpg", "VG_100K_2/2378438.jpg", (0, 0, 200)),
    (f"{VCR}/movieclips_What_to_Expect_When_Youre_Expecting/yNkcLZ0BPuc@32.jpg",
     "vcr1images/movieclips_What_to_Expect_When_Youre_Expecting/yNkcLZ0BPuc@32.jpg", (220, 200, 0)),
    (f"{VG}/VG_100K/404.jpg", "VG_100K/404.jpg", None),
]


@needs_real
def test_every_real_url_maps_to_a_release_path():
    instances = data.load_instances(REAL)
    paths = [release_path(inst["image"]["url"]) for inst in instances]
    assert len(paths) == 1622
    kinds = Counter(path.split("/")[0] for path in paths)
    assert kinds == {"VG_100K": 560, "VG_100K_2": 352, "vcr1images": 710}
    vg = [p for p in paths if p.startswith("VG_100K")]
    vcr = [p for p in paths if p.startswith("vcr1images/")]
    assert len(vg) == 912 and all(re.fullmatch(r"VG_100K(_2)?/\d+\.jpg", p) for p in vg)
    movie_still = r"vcr1images/(lsmdc|movieclips)_[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@\d+\.jpg"
    assert len(vcr) == 710 and all(re.fullmatch(movie_still, p) for p in vcr)
    assert all(inst["image"]["url"].endswith("/" + path.split("/", 1)[1]) for inst, path in zip(instances, paths))


def test_release_paths_of_both_schemes():
    for url, path, _ in IMAGES:
        assert release_path(url) == path
        assert release_path(url.replace("https://", "http://", 1).replace("http://s3", "https://s3", 1)) == path


@pytest.mark.parametrize("url", [
    "https://example.com/VG_100K/1.jpg",
    "https://cs.stanford.edu/people/rak248/VG_100K_3/1.jpg",
    "https://cs.stanford.edu/people/rak248/VG_100K/sub/1.jpg",
    "https://cs.stanford.edu/people/rak248/VG_100K/..",
    "http://s3-us-west-2.amazonaws.com/ai2-rowanz/vcr1images/1.jpg",
    "http://s3-us-west-2.amazonaws.com/ai2-rowanz/vcr1images/../x/1.jpg",
    "cure_sample/000.png",
])
def test_other_urls_are_refused(url):
    with pytest.raises(ValueError, match="neither a Visual Genome image .* nor a VCR image") as err:
        release_path(url)
    assert url in str(err.value) and SETTING in str(err.value)


def test_release_references(tmp_path):
    url, path, _ = IMAGES[2]
    assert release_ref(url, str(tmp_path)) == str(tmp_path.resolve() / path)
    assert release_ref(url, "hf://datasets/org/images@v1/cure/") == f"hf://datasets/org/images@v1/cure/{path}"
    with pytest.raises(ValueError, match="hf://datasets"):
        release_ref(url, "hf://models/org/images")


def _suite(tmp_path: Path) -> Path:
    """A 4-instance CURE file (taken from the sample suite) whose images are the VG and VCR URLs of IMAGES."""
    records = json.loads(data.SAMPLE_PATH.read_text(encoding="utf-8"))[: len(IMAGES)]
    for record, (url, _, _) in zip(records, IMAGES):
        record["image"]["url"] = url
    path = tmp_path / "cure.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _releases(folder: Path, records: list[dict]) -> dict[str, bytes]:
    """Write each present image (a plain colour, at its declared size) under `folder`; their bytes by path."""
    written = {}
    for record, (_, path, colour) in zip(records, IMAGES):
        if colour is None:
            continue
        size = (int(record["image"]["width"]), int(record["image"]["height"]))
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", size, colour).save(target, format="JPEG", quality=95)
        written[path] = target.read_bytes()
    return written


class FirstChoiceModel:
    """A stand-in vision model: candidate 0 wins by mean, the last by sum; it keeps the images it was shown."""

    model_id, revision, dtype, device = "first-choice", None, "none", "cpu"
    has_vision, batch_size, scoring_path = True, 2, "reference"

    def __init__(self):
        self.seen: list[Image.Image] = []

    def score_options(self, request, options):
        self.seen.extend(request.images)
        last = len(options) - 1
        return [OptionScore(sum_logprob=-1.0 if k == last else -9.0, mean_logprob=-0.1 if k == 0 else -2.0,
                            n_tokens=k + 1) for k in range(len(options))]

    def generate(self, requests):
        self.seen.extend(img for r in requests for img in r.images)
        return ["(A)" for _ in requests]


@pytest.fixture
def no_downloads(monkeypatch):
    """Fail any image download: the URLs must never be asked for."""
    asked = []

    def refuse(url, timeout, retries):
        asked.append(url)
        raise ImageUnavailable(url, "downloads are off in this test")

    monkeypatch.setattr(image_fetch, "_download", refuse)
    return asked


def _main_colour(image: Image.Image) -> tuple[int, int, int]:
    return max(image.convert("RGB").getcolors(1 << 20))[1]


def _close(a, b, tolerance: int = 8) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def test_a_run_reads_the_images_from_the_releases_folder(tmp_path, no_downloads):
    suite = _suite(tmp_path)
    records = [json.loads(line) for line in suite.read_text().splitlines()]
    folder = tmp_path / "cure-images"
    _releases(folder, records)
    model = FirstChoiceModel()
    result = run_benchmark("cure", model, suite="full", sources={"cure": str(suite), SOURCE: str(folder)},
                           images_dir=tmp_path / "cache", folder=tmp_path / "run")

    assert no_downloads == [] and not (tmp_path / "cache").exists()
    assert result.counts["items"] == 4 and result.counts["scored"] == 3 and result.counts["image_unavailable"] == 1
    colours = [_main_colour(img) for img in model.seen]
    for _, _, colour in IMAGES[:3]:
        assert any(_close(c, colour) for c in colours), colour  # each file was read, marked with the red box
    assert any(px == (255, 0, 0) for _, px in model.seen[0].getcolors(1 << 20))

    by_item: dict[str, list[dict]] = {}
    for row in result.rows:
        by_item.setdefault(row["question_id"], []).append(row)
    for (url, path, colour), rows in zip(IMAGES, by_item.values()):
        assert all(row["image_url"] == url for row in rows)  # the data's URL is kept as it is
        assert all(row["image_file"] == str(folder.resolve() / path) for row in rows)
        if colour is None:
            assert all(row["status"] == "image_unavailable" for row in rows)
            assert all(path in row["error"] and SETTING in row["error"] for row in rows), rows[0]["error"]
        else:
            assert all(row["status"] == "ok" for row in rows)
            # the explorer opens the same file, with the region drawn
            picture = explore.picture(rows[0], tmp_path / "explorer-cache")
            assert _close(_main_colour(picture), colour)
    missing = list(by_item.values())[3][0]
    with pytest.raises(ImageUnavailable, match="file not found"):
        explore.picture(missing, tmp_path / "explorer-cache")
    assert no_downloads == []

    # likelihood: the mean rule picks candidate 0, the sum rule the last; both, and every option's numbers, are kept
    ok = [row for row in result.rows if row["status"] == "ok"]
    assert all(row["parsed_answer"] == 0 and row["choice_sum"] == 5 for row in ok)
    scores = json.loads(ok[0]["option_scores"])
    assert [set(s) for s in scores] == [{"sum", "mean", "n_tokens"}] * 6
    assert "scores_sum_rule" in result.extra


def test_images_from_a_hub_dataset_prefix(tmp_path, hub_cache, no_downloads):
    from tests.hub_cache import lay_into_hub_cache

    suite = _suite(tmp_path)
    records = [json.loads(line) for line in suite.read_text().splitlines()]
    written = _releases(tmp_path / "laid", records)
    lay_into_hub_cache(hub_cache, "cure-org/cure-images", repo_type="dataset",
                       files={f"releases/{path}": content for path, content in written.items()})
    model = FirstChoiceModel()
    prefix = "hf://datasets/cure-org/cure-images/releases"
    result = run_benchmark("cure", model, suite="full", sources={"cure": str(suite), SOURCE: prefix},
                           images_dir=tmp_path / "cache", folder=tmp_path / "run")

    assert no_downloads == []
    assert result.counts["scored"] == 3 and result.counts["image_unavailable"] == 1
    missing = [row for row in result.rows if row["status"] == "image_unavailable"]
    assert missing and all(row["image_file"] == f"{prefix}/VG_100K/404.jpg" for row in missing)
    assert all("VG_100K/404.jpg" in row["error"] and "Hub download failed" in row["error"] for row in missing)
    first = next(row for row in result.rows if row["question_id"] == "cure-0000")
    assert _close(_main_colour(explore.picture(first, tmp_path / "explorer-cache")), IMAGES[0][2])


def test_without_the_setting_the_urls_are_used(tmp_path):
    suite = _suite(tmp_path)
    plan = get_benchmark("cure").plan(PlanContext(suite="full", sources={"cure": str(suite)}))
    assert [row["image_file"] for row in plan.rows] == [""] * len(plan.rows)
    instances = data.load_instances(suite)
    resolve_images(instances, "")
    assert [inst["image_ref"] for inst in instances] == [url for url, _, _ in IMAGES]


def test_the_sample_suite_keeps_its_own_images():
    plan = get_benchmark("cure").plan(PlanContext(suite="sample", sources={SOURCE: "/no/such/folder"}))
    assert plan.rows and all(row["image_file"] == "" for row in plan.rows)


def test_a_bad_setting_or_a_foreign_url_stops_the_plan(tmp_path):
    suite = _suite(tmp_path)
    benchmark = get_benchmark("cure")
    with pytest.raises(ValueError, match=f"{SETTING} is .* not a folder"):
        benchmark.plan(PlanContext(suite="full", sources={"cure": str(suite), SOURCE: str(tmp_path / "none")}))
    records = [json.loads(line) for line in suite.read_text().splitlines()]
    records[2]["image"]["url"] = "https://example.com/picture.jpg"
    suite.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(ValueError, match="CURE instance cure-0002: 'https://example.com/picture.jpg' is neither"):
        benchmark.plan(PlanContext(suite="full", sources={"cure": str(suite), SOURCE: str(tmp_path)}))


def test_the_card_declares_the_setting_the_rule_and_the_differences():
    source = next(s for s in CARD.sources if s.key == SOURCE)
    assert (source.setting, source.default) == (SETTING, "")
    assert [s.key for s in CARD.sources] == ["cure", SOURCE]  # the README's table has it after LEADERBOARD_CURE_FULL
    rule = CARD.likelihood_rule
    assert "mean log-likelihood per token" in rule and "choice_sum" in rule and "option_scores" in rule
    assert len(CARD.differences) >= 5 and all(d.strip().endswith(".") for d in CARD.differences)
    said = " ".join(CARD.differences)
    assert "red rectangle" in said and "mean log-likelihood" in said and SETTING in said and "coverage" in said

    from leaderboard.board.columns import schema
    from leaderboard.ui.about import benchmark_markdown

    about = benchmark_markdown(CARD, schema())
    assert rule in about and all(d in about for d in CARD.differences) and SETTING in about
