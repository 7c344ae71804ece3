"""`python -m evaluator` for the tests: many command lines run one after the other in one Python process."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import PROJECT


# Runs `python -m evaluator` once per argument list, one after the other in one Python process (the module run as
# __main__ by runpy, as `-m` runs it, and its SystemExit caught), so that torch and transformers load once rather
# than once per command. What each command writes to file descriptors 1 and 2 is captured apart (logging and C
# libraries included), and its exit status is the one `python -m evaluator` would exit with.
_MANY = r"""
import json, os, runpy, sys, tempfile

def one(argv):
    sys.argv = ["evaluator", *argv]
    try:
        runpy.run_module("evaluator", run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            return exit.code or 0
        print(exit.code, file=sys.stderr)
        return 1
    return 0

commands, report_path = json.loads(sys.argv[1]), sys.argv[2]
done = []
for argv in commands:
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
        done.append({"args": argv, "returncode": code, "stdout": out.read().decode(), "stderr": err.read().decode()})
with open(report_path, "w") as report:
    json.dump(done, report)
"""


def evaluator_many(commands: list[list[str]], report, timeout: float = 300) -> list[subprocess.CompletedProcess]:
    """The outcome of `python -m evaluator <args>` for each argument list, all run in one process (see _MANY)."""
    wrapper = subprocess.run([sys.executable, "-c", _MANY, json.dumps(commands), str(report)], cwd=PROJECT,
                             capture_output=True, text=True, timeout=timeout)
    assert wrapper.returncode == 0, wrapper.stderr[-3000:]  # an uncaught exception would end it with a traceback
    return [subprocess.CompletedProcess(d["args"], d["returncode"], d["stdout"], d["stderr"])
            for d in json.loads(report.read_text())]


def family_command(folder, out, size: int, limit: int = 0) -> list[str]:
    """The CLI run a family's batch check compares (tests/test_family_cli.py, bench/family_batches.py): the CURE
    sample suite by generation and ReForm-Eval's, float32 on the CPU, at batch `size`, into out/batch-<size>; the
    whole samples, or `limit` items per benchmark (per ReForm-Eval dimension)."""
    argv = ["run", "--model", str(folder), "--benchmarks", "cure,reform", "--option", "cure.mode=generation",
            "--suite", "sample", "--device", "cpu", "--precision", "float32", "--batch-size", str(size),
            "--images-dir", str(out / "images"), "--out", str(out / f"batch-{size}")]
    return argv + (["--limit", str(limit)] if limit else [])
