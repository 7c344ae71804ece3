"""tools/vllm_standin.py for the tests: started as a subprocess on a free loopback port, on a tiny model folder whose
chat template writes a reply right after its generation prompt (as most real templates do), until the block ends."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import PROJECT, free_port, wait_for

STANDIN = PROJECT / "tools" / "vllm_standin.py"


def replies_after_prompt(folder: Path, into: Path) -> Path:
    """A copy of a tiny model folder (tests/tiny_models/common.py's template: `role: content` lines, `assistant:` as
    the generation prompt) whose template writes `role:content`, so a reply follows the generation prompt as is."""
    shutil.copytree(folder, into, dirs_exist_ok=True)
    template = into / "chat_template.jinja"
    text = template.read_text(encoding="utf-8")
    changed = text.replace("{{ message['role'] }}: ", "{{ message['role'] }}:")
    assert changed != text, "the tiny template's `role: ` was not found"
    template.write_text(changed, encoding="utf-8")
    return into


class VllmStandIn:
    """`python tools/vllm_standin.py --model FOLDER --port PORT --served-model-name NAME --protocol P` (vllm, sglang
    or none); base_url ends in /v1,
    spec is the evaluator's `endpoint:` spec for it."""

    def __init__(self, folder: Path | str, name: str = "standin-model", startup_timeout: float = 180.0,
                 protocol: str = "vllm"):
        self.folder, self.name, self.port, self.protocol = Path(folder), name, free_port(), protocol
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.spec = f"endpoint:{self.base_url}|{name}"
        self.startup_timeout = startup_timeout
        self.log = Path(tempfile.mkstemp(prefix="vllm-standin-", suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the stand-in exited: {self.log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as answer:
                return answer.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def __enter__(self) -> "VllmStandIn":
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([sys.executable, str(STANDIN), "--model", str(self.folder), "--port",
                                             str(self.port), "--served-model-name", self.name,
                                             "--protocol", self.protocol],
                                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_for(self._healthy, timeout=self.startup_timeout, step=0.2)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.unlink(missing_ok=True)
