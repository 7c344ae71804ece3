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


def test_list_benchmarks_gives_one_line_each_with_what_it_measures_modes_judge_and_suite_sizes():
    from evaluator.api import benchmark_names, cards

    done = evaluator("list-benchmarks")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == list(benchmark_names())
    for line, card in zip(lines, cards()):
        what = line.split(":", 1)[1].split(". modes: ")[0].strip()
        assert len(what.split()) >= 4, line  # a few words on what it measures, not a bare name
        assert ("needs a judge" in line) == card.needs_judge and ("no judge" in line) != card.needs_judge, line
        assert re.search(r"; sample suite: [\d,]+ items; ", line), line
        full = f"{card.full_suite_items:,} items" if card.full_suite_items else "not known"
        assert line.endswith(f"; full suite: {full}"), line
    by_name = dict(zip(benchmark_names(), lines))
    assert "modes: likelihood (default), generation;" in by_name["cure"]
    assert "full suite: 1,622 items" in by_name["cure"]
    assert "modes: generation;" in by_name["simpleqa"] and "sample suite: 20 items" in by_name["cure"]


def test_an_unknown_benchmark_is_said_at_once_before_torch_and_nothing_about_devices(tmp_path):
    """The name is checked before anything heavy is imported: neither torch nor the runner has loaded when the
    error line comes, and a command that fails on its arguments says nothing about devices."""
    wrapper = ("import runpy, sys\n"
               "sys.argv = ['evaluator', 'run', '--model', 'org/model', '--benchmarks', 'cure,nope', '--out', "
               f"{str(tmp_path / 'out')!r}]\n"
               "try:\n    runpy.run_module('evaluator', run_name='__main__', alter_sys=True)\n"
               "except SystemExit as exit:\n    code = exit.code\n"
               "heavy = [name for name in ('torch', 'transformers', 'evaluator.runner') if name in sys.modules]\n"
               "print('heavy:', heavy)\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", wrapper], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == ["error: unknown benchmark 'nope'; known: cure, simpleqa, reform, lave "
                                        "(python -m evaluator list-benchmarks)"], done.stderr
    assert done.stdout.strip() == "heavy: []"
    failing = (["--benchmarks", "nope"], ["--batch-size", "many"], ["--option", "cure.mode=guess"],
               ["--benchmarks", "simpleqa"])  # simpleqa without --judge
    runs = evaluator_many([["run", "--model", "org/model", *args, "--out", str(tmp_path / "out")] for args in failing],
                          tmp_path / "said.json")
    for args, said in zip(failing, runs, strict=True):
        output = said.stdout + said.stderr
        assert said.returncode == 1 and said.stderr.startswith("error: "), (args, output)
        assert not re.search(r"WARNING|CUDA|device", output, re.IGNORECASE), (args, output)
