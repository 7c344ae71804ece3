"""`python -m evaluator` (and `python SCRIPT`) for the tests: many command lines run one after the other in one Python
process."""
from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading

from tests.conftest import PROJECT


# A Python process that runs `python -m evaluator` once per argument list, one after the other (the module run as
# __main__ by runpy, as `-m` runs it, and its SystemExit caught), so that torch and transformers load once rather
# than once per command. An argument list whose first word is a .py file runs that script as `python SCRIPT ARGS`
# would (runpy.run_path as __main__, its folder first on sys.path meanwhile); an exception nothing caught is printed
# as Python prints it, with exit status 1. It stays up for the test worker's whole session (about 8 s of imports
# saved per call): each call sends it one line, {"commands", "report", "env"}, on stdin, and it answers "done" on
# stdout once the report is written. What each command writes to file descriptors 1 and 2 is captured apart (logging
# and C libraries included), and its exit status is the one `python -m evaluator` would exit with. The call's
# environment is the caller's at the time of the call, or the one it gives.
_SERVE = r"""
import json, os, runpy, sys, tempfile, traceback

def one(argv):
    script = argv[0] if argv and argv[0].endswith(".py") else None
    sys.argv = list(argv) if script else ["evaluator", *argv]
    folder = os.path.dirname(os.path.abspath(script)) if script else None
    if folder:
        sys.path.insert(0, folder)
    try:
        if script:
            runpy.run_path(script, run_name="__main__")
        else:
            runpy.run_module("evaluator", run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            return exit.code or 0
        print(exit.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        if folder and folder in sys.path:
            sys.path.remove(folder)
    return 0

for line in sys.stdin:
    call = json.loads(line)
    os.environ.clear(); os.environ.update(call["env"])
    done = []
    for argv in call["commands"]:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            sys.stdout.flush(); sys.stderr.flush()
            saved = os.dup(1), os.dup(2)
            os.dup2(out.fileno(), 1); os.dup2(err.fileno(), 2)
            try:
                code = one(argv)
            finally:
                sys.stdout.flush(); sys.stderr.flush()
                os.dup2(saved[0], 1); os.dup2(saved[1], 2)
                os.close(saved[0]); os.close(saved[1])
            out.seek(0); err.seek(0)
            done.append({"args": argv, "returncode": code, "stdout": out.read().decode(errors="replace"),
                         "stderr": err.read().decode(errors="replace")})
    with open(call["report"], "w") as report:
        json.dump(done, report)
    print("done", flush=True)
"""


class _Runner:
    """The test worker's one _SERVE process, started on first use and again after one that died or timed out."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.log = tempfile.TemporaryFile()

    def call(self, commands: list[list[str]], report, timeout: float, env: dict[str, str] | None = None) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.log.seek(0)
            self.log.truncate()
            self.proc = subprocess.Popen([sys.executable, "-c", _SERVE], cwd=PROJECT, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.log, text=True)
        environment = dict(os.environ if env is None else env)
        line = json.dumps({"commands": commands, "report": str(report), "env": environment})
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if answer != ["done\n"]:  # timed out, or the process died (an uncaught exception: its traceback)
            self.close()
            self.log.seek(0)
            raise AssertionError(f"the evaluator runner gave no answer ({answer or 'timed out'}): "
                                 f"{self.log.read()[-3000:].decode(errors='replace')}")

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


_RUNNER = _Runner()
atexit.register(_RUNNER.close)


def evaluator_many(commands: list[list[str]], report, timeout: float = 300,
                   env: dict[str, str] | None = None) -> list[subprocess.CompletedProcess]:
    """The outcome of `python -m evaluator <args>` (or `python <script.py> <args>`) for each argument list, all run in
    the worker's runner (_SERVE), in `env` (default: this process's environment)."""
    _RUNNER.call(commands, report, timeout, env)
    return [subprocess.CompletedProcess(d["args"], d["returncode"], d["stdout"], d["stderr"])
            for d in json.loads(report.read_text())]


def family_command(folder, out, size: int, limit: int = 0, judge: str = "", options: tuple[str, ...] = ()) -> list[str]:
    """The CLI run a family's batch check compares (tests/test_family_cli.py, bench/family_batches.py): the CURE
    sample suite by generation and ReForm-Eval's, float32 on the CPU, at batch `size`, into out/batch-<size>; the
    whole samples, or `limit` items per benchmark (per ReForm-Eval dimension). With a `judge` (a text-only model's
    run), SimpleQA's sample instead, graded by that judge; `options` are more --option values."""
    asked = (["--benchmarks", "simpleqa", "--judge", judge] if judge else
             ["--benchmarks", "cure,reform", "--option", "cure.mode=generation"])
    argv = ["run", "--model", str(folder), *asked, "--suite", "sample", "--device", "cpu", "--precision", "float32",
            "--batch-size", str(size), "--images-dir", str(out / "images"), "--out", str(out / f"batch-{size}"),
            *(part for option in options for part in ("--option", option))]
    return argv + (["--limit", str(limit)] if limit else [])
