"""Take the README's screenshots of the real app: docs/images/board.png (the Leaderboard tab with its board) and
docs/images/explorer.png (the Explorer with one question opened: its image, question, both runs' answers and grades).

The runs are the tests' (tests/explorer_runs.py): tiny random-weight models (tests/tiny_models.py) run through the
real evaluator on the sample suites, graded by a scripted judge on 127.0.0.1, and published into a local store in a
temporary folder: tiny-llava twice (CURE, ReForm-Eval, LAVE; the second run answers differently) and tiny-llama
(SimpleQA), and tiny-llava-next asked as tiny-llava's first run was (SIBLING), so that the board shows two runs that
share a group and, their intervals overlapping, a place ("1-2"). The app (leaderboard.ui.build_app) is served on
127.0.0.1 and photographed in Debian's chromium through Playwright; the PNGs are cropped to the part that matters
and optimised with Pillow. Offline (HF_HUB_OFFLINE=1); about two minutes on two cores. Run from the project root:

    .venv/bin/python tools/screenshots.py [--out docs/images] [--width 1400]
"""
from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _var in [v for v in os.environ if v.startswith("LEADERBOARD_")]:
    os.environ.pop(_var)
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HUB_DISABLE_XET="1",
                  GRADIO_ANALYTICS_ENABLED="False", TOKENIZERS_PARALLELISM="false")
os.environ.pop("HF_TOKEN", None)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
HEIGHT = 1000
# a second vision model, run as the tests' run vision-a is: the board's group then holds two runs
SIBLING = "tiny-org/tiny-llava-next"


def publish_sample_runs(root: Path):
    """Build the tiny models under `root` and lay them into the Hub cache (main() points it under `root`), run the
    tests' three finished runs and SIBLING and publish them into a local store there. Returns (settings, store,
    {run name: key})."""
    import torch
    from huggingface_hub import constants

    from leaderboard.settings import Settings
    from leaderboard.store import open_store
    from tests.explorer_runs import JUDGES, make_runs, publish_run, run_one
    from tests.hub_cache import lay_into_hub_cache
    from tests.tiny_models import build_tiny_llama, build_tiny_llava, build_tiny_llava_next

    models = {}
    for repo_id, build in (("tiny-org/tiny-llava", build_tiny_llava), ("tiny-org/tiny-llama", build_tiny_llama),
                           (SIBLING, build_tiny_llava_next)):
        folder = build(root / repo_id.split("/")[1])  # laid into the cache the offline Hub client reads
        sha = lay_into_hub_cache(Path(constants.HF_HUB_CACHE), repo_id, folder)
        models[repo_id] = SimpleNamespace(repo_id=repo_id, sha=sha, folder=folder)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrix products: one thread is faster
    try:
        runs = make_runs(root / "runs", models["tiny-org/tiny-llava"], models["tiny-org/tiny-llama"])
        runs["sibling"] = run_one(root / "runs", "sibling", models[SIBLING], "auto", ("cure", "reform", "lave"), {},
                                  JUDGES["vision-a"])
    finally:
        torch.set_num_threads(threads)
    settings = Settings.from_env({}, home=root / "home", run_scheduler=False)
    store = open_store(settings)
    keys = {name: publish_run(store, settings, finished) for name, finished in runs.items()}
    return settings, store, keys


def optimise(path: Path) -> None:
    """Rewrite the PNG smaller (an adaptive palette: the app's flat colours survive it) when that saves bytes."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    tmp = path.with_suffix(".tmp.png")
    small.save(tmp, optimize=True)
    if tmp.stat().st_size < path.stat().st_size:
        tmp.replace(path)
    else:
        tmp.unlink()


# the opened question: CURE's first sample scene (a beach umbrella under the sun, its region marked), where run A
# (answers read by likelihood) gets part of the chain right and run B (by generation) marks no option
BENCHMARK, ITEM = "cure", "cure-0000"

# the page's y of the top of `selector`, and of the bottom of each opened run's first two parts (its facts, step 1)
CROP = """(selector) => { const top = document.querySelector(selector).getBoundingClientRect().top;
  const runs = [...document.querySelectorAll('#explorer-opened .item-run')].filter(e => e.offsetParent);
  const ends = runs.map(r => { const parts = r.querySelectorAll('.item-part');
    return (parts[1] || parts[0] || r).getBoundingClientRect().bottom; });
  return {top: top + window.scrollY, bottom: Math.max(...ends) + window.scrollY}; }"""

# the board's table scrolls inside a box of a fixed height: let every scrolling box in it grow to its rows
UNSCROLL = """() => { for (const e of document.querySelectorAll('#leaderboard-table, #leaderboard-table *')) {
  const style = getComputedStyle(e);
  if (e.scrollHeight > e.clientHeight && /(auto|scroll)/.test(style.overflowY)) {
    e.style.maxHeight = 'none'; e.style.height = 'auto'; } } }"""


def shoot(url: str, keys: dict[str, str], out: Path, width: int = 1400, browser=None) -> list[Path]:
    """Photograph the app at `url` into `out`: the board, and question ITEM of BENCHMARK opened in the Explorer on
    run vision-a compared with vision-b (`keys`: run name -> key). Returns the PNGs. In Debian's chromium, or in
    `browser` (a Playwright Browser) when given."""
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                return shoot(url, keys, out, width, browser)
            finally:
                browser.close()

    from tests.test_board_browser import wait_until_fits
    from tests.test_explorer_browser import wait_heading

    out.mkdir(parents=True, exist_ok=True)
    board_png, explorer_png = out / "board.png", out / "explorer.png"
    context = browser.new_context(viewport={"width": width, "height": HEIGHT})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)

        # the board: every run, ranked in its cohort; from the title to the table's last row (all of them)
        page.goto(url)
        table = page.locator("#leaderboard-table")
        table.get_by_text("tiny-org/tiny-llama", exact=True).filter(visible=True).first.wait_for(state="visible")
        wait_until_fits(page)
        page.wait_for_timeout(500)  # columns are sized after the rows arrive
        page.evaluate(UNSCROLL)
        page.wait_for_timeout(300)
        bottom = page.evaluate("() => Math.max(...[...document.querySelectorAll('#leaderboard-table')]"
                               ".filter(e => e.offsetParent).map(e => e.getBoundingClientRect().bottom))")
        page.screenshot(path=board_png, full_page=True, clip={"x": 0, "y": 0, "width": width, "height": bottom + 16})

        # the Explorer: the question's image, then both runs' answers and grades (the facts and step 1)
        page.goto(f"{url}?tab=explorer&bench={BENCHMARK}&run={keys['vision-a']}&vs={keys['vision-b']}&item={ITEM}")
        wait_heading(page, ITEM)
        page.locator("#explorer-opened h3").filter(has_text="B: ").first.wait_for(state="visible")
        page.wait_for_function("() => [...document.querySelectorAll('#explorer-image img')]"
                               ".some(i => i.offsetParent && i.complete && i.naturalWidth > 0)")
        page.wait_for_timeout(500)
        box = page.evaluate(CROP, "#explorer-image")
        page.screenshot(path=explorer_png, full_page=True, clip={
            "x": 0, "y": box["top"] - 16, "width": width, "height": box["bottom"] - box["top"] + 32})
    finally:
        context.close()
    for path in (board_png, explorer_png):
        optimise(path)
    return [board_png, explorer_png]


def serve_and_shoot(settings, store, keys: dict[str, str], out: Path, width: int = 1400, browser=None) -> list[Path]:
    """Serve the app on `store` on 127.0.0.1 and photograph it (shoot); the server is closed afterwards."""
    from leaderboard.ui import build_app, launch_options

    demo = build_app(settings, store)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings, store))
    try:
        return shoot(f"http://127.0.0.1:{port}/", keys, out, width, browser)
    finally:
        demo.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the PNGs go")
    parser.add_argument("--width", type=int, default=1400, help="the browser window's width in CSS pixels")
    args = parser.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        parser.error(f"needs Debian's chromium at {CHROMIUM} (apt-get install -y chromium)")
    started = time.monotonic()
    saved = {name: os.environ.get(name) for name in ("HF_HOME", "HF_HUB_CACHE")}
    with tempfile.TemporaryDirectory(prefix="screenshots-") as tmp:
        root = Path(tmp)
        if "huggingface_hub" not in sys.modules:  # a Hub cache of our own for the tiny models (read at import)
            os.environ.update(HF_HOME=str(root / "hf-home"), HF_HUB_CACHE=str(root / "hf-home" / "hub"))
        try:
            settings, store, keys = publish_sample_runs(root)
            paths = serve_and_shoot(settings, store, keys, args.out, args.width)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    for path in paths:
        print(f"{path} ({path.stat().st_size // 1024} KB)")
    print(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
