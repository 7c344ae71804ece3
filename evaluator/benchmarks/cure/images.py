"""CURE's images from the official releases instead of their URLs.

Each CURE image URL points into Visual Genome (cs.stanford.edu/people/rak248/VG_100K[_2]/<file>) or the VCR
movie stills (s3-us-west-2.amazonaws.com/ai2-rowanz/vcr1images/<movie>/<file>). The data's authors ask users to
take the images from the VG and VCR releases, not from those URLs: with the `cure.images` source set (a local
folder or an hf://datasets/<org>/<name> prefix holding VG_100K/, VG_100K_2/ and vcr1images/ in the releases' own
layouts), each image is read from its file there.
"""
from __future__ import annotations

import re
from pathlib import Path

from evaluator.inputs.images import ImageUnavailable
from evaluator.inputs.sources import parse_hf

SOURCE = "cure.images"
SETTING = "LEADERBOARD_CURE_IMAGES"
_RELEASES = (
    re.compile(r"https?://cs\.stanford\.edu/people/rak248/(VG_100K(?:_2)?/[^/?#]+)"),
    re.compile(r"https?://s3-us-west-2\.amazonaws\.com/ai2-rowanz/(vcr1images/[^/?#]+/[^/?#]+)"),
)


def release_path(url: str) -> str:
    """The image's path inside the releases: VG_100K/<file>, VG_100K_2/<file> or vcr1images/<movie>/<file>.

    ValueError for a URL that is neither a Visual Genome nor a VCR image.
    """
    for pattern in _RELEASES:
        m = pattern.fullmatch(url.strip())
        if m and not any(part in (".", "..") for part in m.group(1).split("/")):
            return m.group(1)
    raise ValueError(f"{url!r} is neither a Visual Genome image (.../rak248/VG_100K[_2]/<file>) nor a VCR image "
                     f"(.../ai2-rowanz/vcr1images/<movie>/<file>), so it has no file in the {SETTING} folder")


def release_ref(url: str, images: str) -> str:
    """Where the image of `url` is read from the releases folder `images` (a local folder or an
    hf://datasets/<org>/<name>[@rev][/<folder>] prefix): a local path or an hf:// reference."""
    relative = release_path(url)
    if images.startswith("hf://"):
        ref = f"{images.rstrip('/')}/{relative}"
        parse_hf(ref)  # a malformed prefix is refused here, before any image is asked for
        return ref
    return str(Path(images).expanduser().resolve() / relative)


def resolve_images(instances: list[dict], images: str) -> None:
    """With `images` set, point each instance's image_ref at its release file and keep the file's path inside
    the releases in "release_path"; unset, leave the references (the URLs) as they are. ValueError names the
    instance whose URL has no release file, or a local `images` that is not a folder."""
    if not images:
        return
    if not images.startswith("hf://") and not Path(images).expanduser().is_dir():
        raise ValueError(f"{SETTING} is {images!r}, which is not a folder")
    for inst in instances:
        try:
            inst["image_ref"] = release_ref(inst["image"]["url"], images)
        except ValueError as exc:
            raise ValueError(f"CURE instance {inst['question_id']}: {exc}") from None
        inst["release_path"] = release_path(inst["image"]["url"])


def unavailable_in_release(exc: ImageUnavailable, relative: str) -> ImageUnavailable:
    """The failure of a release file, its reason naming the path expected in the images folder."""
    return ImageUnavailable(exc.url, f"{relative} not readable in the {SETTING} folder: {exc.reason}")
