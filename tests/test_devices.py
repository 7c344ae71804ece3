"""No silent CPU: --device / LEADERBOARD_DEVICE, the one-line failure when a GPU is asked for and missing, the CPU
fallback said once (a warning only where a GPU was expected), "auto" precision per GPU generation, and the hardware
block of a results file. Every GPU case is simulated on the CPU (torch.cuda's answers and the nvidia-smi probe are patched)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from evaluator import __main__ as cli
from evaluator.models import DeviceUnavailable, devices
from evaluator.runs import runner
from evaluator.runs.runner import RunConfig
from leaderboard.running import evaluator_process
from leaderboard.settings import Settings
from tests.conftest import PROJECT

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def no_gpu(monkeypatch):
    """A machine where torch finds no GPU: CUDA 13 torch, nvidia-smi missing, CUDA_VISIBLE_DEVICES unset."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(devices, "nvidia_driver", lambda: "nvidia-smi not found")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.fixture
def gpus(monkeypatch):
    """gpus(capability, count=1, name=..., memory_gib=...): torch sees that many such GPUs, driver 580.65.06."""
    def _fake(capability: tuple[int, int], count: int = 1, name: str = "NVIDIA H100 80GB HBM3", memory_gib: int = 80):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)
        monkeypatch.setattr(torch.cuda, "get_device_properties",
                            lambda device=None: SimpleNamespace(total_memory=memory_gib * 2**30, name=name))
        monkeypatch.setattr(torch.version, "cuda", "13.0")
        monkeypatch.setattr(torch.version, "hip", None)
        monkeypatch.setattr(devices, "nvidia_driver", lambda: "580.65.06")

    return _fake


def _never_load(monkeypatch) -> list:
    """Patch the model loader to record any call (a run that fails on the device must never reach it)."""
    calls: list = []
    import evaluator.models

    monkeypatch.setattr(evaluator.models, "load_model", lambda *a, **k: calls.append((a, k)))
    return calls


# ---- --device cuda: a GPU or one clear line -------------------------------------------------------------------

@pytest.mark.slow  # starts python -m evaluator
def test_cuda_without_a_gpu_fails_in_one_line_on_the_command_line(tiny_llava, tmp_path):
    """A real subprocess, every GPU hidden: one `error:` line, no traceback, nothing loaded, no results."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "evaluator", "run", "--model", tiny_llava.repo_id, "--revision",
                           tiny_llava.sha, "--device", "cuda", "--out", str(tmp_path / "out")], cwd=PROJECT,
                          capture_output=True, text=True, timeout=300, env=env)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    line = lines[0]
    assert line.startswith("error: --device cuda asks for a GPU, but CUDA is not usable: ")
    assert f"torch {torch.__version__}" in line and "CUDA_VISIBLE_DEVICES='' (hides every GPU)" in line
    assert "nvidia-smi not found" in line or "NVIDIA driver" in line or "nvidia-smi failed" in line
    assert "loading" not in done.stdout and not (tmp_path / "out" / "results.json").exists()


def test_cuda_without_a_gpu_stops_before_any_weights_load(no_gpu, monkeypatch, tmp_path, capsys):
    calls = _never_load(monkeypatch)
    with pytest.raises(DeviceUnavailable) as caught:
        runner.run(RunConfig(model="org/any", device="cuda"), tmp_path / "out")
    assert calls == [] and not (tmp_path / "out").exists()
    assert str(caught.value) == ("--device cuda asks for a GPU, but CUDA is not usable: torch "
                                 f"{torch.__version__} built for CUDA 13.0; nvidia-smi not found; "
                                 "CUDA_VISIBLE_DEVICES unset")
    status = cli.main(["run", "--model", "org/any", "--device", "cuda", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 1 and calls == [] and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: --device cuda asks for a GPU") and "nvidia-smi not found" in err


def test_an_old_driver_is_named_as_too_old_for_the_cuda_13_wheel(no_gpu, monkeypatch, tmp_path):
    monkeypatch.setattr(devices, "nvidia_driver", lambda: "575.57.08")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    calls = _never_load(monkeypatch)
    with pytest.raises(DeviceUnavailable) as caught:
        runner.run(RunConfig(model="org/any", device="cuda"), tmp_path / "out")
    message = str(caught.value)
    assert calls == [] and "\n" not in message
    assert ("NVIDIA driver 575.57.08 is too old for CUDA 13.0 (it needs driver >= 580)" in message
            and "CUDA_VISIBLE_DEVICES='0'" in message and "built for CUDA 13.0" in message)
    assert "too old" not in devices.cuda_findings(driver="580.65.06")  # new enough: just named
    assert "NVIDIA driver 580.65.06" in devices.cuda_findings(driver="580.65.06")


def test_what_torch_warned_and_a_cpu_only_build_are_said_too(no_gpu, monkeypatch):
    import warnings

    def warns() -> bool:
        warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old\n(found version 12040).")
        return False

    monkeypatch.setattr(torch.cuda, "is_available", warns)
    with pytest.raises(DeviceUnavailable, match=r"torch said: CUDA initialization: .* too old \(found version 12040\)"):
        devices.resolve_device("cuda")
    monkeypatch.setattr(torch.version, "cuda", None)
    assert "is a CPU-only build (no CUDA)" in devices.cuda_findings()


def test_the_nvidia_smi_probe_never_raises(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert devices.nvidia_driver() == "nvidia-smi not found"
    assert devices.describe_hardware("cpu", "float32")["driver"] is None
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nprintf '580.65.06\\n580.65.06\\n'\n")
    smi.chmod(0o755)
    assert devices.nvidia_driver() == "580.65.06" and devices.driver_major("580.65.06") == 580
    smi.write_text("#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
                   "Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n")
    said = devices.nvidia_driver()
    assert said.startswith("nvidia-smi failed: NVIDIA-SMI has failed") and "\n" not in said
    assert devices.driver_major(said) is None


# ---- auto: the device said once, a warning only where a GPU was expected -------------------------------------

def test_auto_without_a_gpu_says_the_device_once_without_a_warning_and_the_results_say_cpu(no_gpu, tiny_llama,
                                                                                          tmp_path, capsys,
                                                                                          monkeypatch):
    monkeypatch.delenv("LEADERBOARD_DEVICE", raising=False)
    results = runner.run(RunConfig(model=tiny_llama.repo_id, revision=tiny_llama.sha, device="auto"), tmp_path)
    said = capsys.readouterr()
    assert "WARNING" not in said.err + said.out
    lines = [line for line in said.out.splitlines() if "device" in line or "cpu" in line.split()]
    assert len(lines) == 1 and lines[0].startswith("device: cpu; no usable CUDA GPU, running on the CPU"), said.out
    assert "nvidia-smi not found" in lines[0] and "CUDA_VISIBLE_DEVICES unset" in lines[0]
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored == results and stored["run"]["device"] == "cpu"
    hardware = stored["run"]["hardware"]
    assert hardware == {"device": "cpu", "dtype": "float32", "gpu_name": None, "gpu_count": 0, "gpu_memory_gib": [],
                        "driver": None, "torch_cuda": "13.0", "cpu_reason": lines[0][len("device: cpu; "):]}


def test_the_cpu_is_a_warning_only_where_a_gpu_was_expected(no_gpu, monkeypatch, gpus):
    monkeypatch.delenv("LEADERBOARD_DEVICE", raising=False)
    device, reason = devices.resolve_device("auto")
    assert devices.device_notice(device, reason) == (f"device: cpu; {reason}", False)  # a CPU-only machine
    assert devices.device_notice("cpu") == ("device: cpu (as asked)", False)
    monkeypatch.setenv("LEADERBOARD_DEVICE", "cuda")  # a Hugging Face Job on a GPU flavor
    line, warning = devices.device_notice(device, reason)
    assert warning and line.endswith("(a GPU was expected: LEADERBOARD_DEVICE=cuda)")
    monkeypatch.delenv("LEADERBOARD_DEVICE")
    monkeypatch.setattr(devices, "nvidia_driver", lambda: "575.57.08")  # a GPU torch cannot use
    line, warning = devices.device_notice(device, reason)
    assert warning and line.endswith("(a GPU was expected: NVIDIA driver 575.57.08 found)")
    gpus((9, 0), count=2)
    assert devices.device_notice("cuda") == ("device: cuda (NVIDIA H100 80GB HBM3, 2 GPUs)", False)


def test_device_choice(no_gpu, gpus):
    assert devices.resolve_device("cpu") == ("cpu", None)
    device, reason = devices.resolve_device("auto")
    assert device == "cpu" and reason.startswith("no usable CUDA GPU")
    with pytest.raises(ValueError, match="device must be one of auto, cuda, cpu"):
        devices.resolve_device("gpu")
    gpus((9, 0))
    assert devices.resolve_device("auto") == devices.resolve_device("cuda") == ("cuda", None)
    assert devices.resolve_device("cpu") == ("cpu", None)  # an explicit CPU wins


# ---- auto precision per GPU generation -----------------------------------------------------------------------

@pytest.mark.parametrize("capability,expected", [((7, 5), torch.float16),   # T4: no native bfloat16
                                                 ((7, 0), torch.float16),   # V100
                                                 ((8, 0), torch.bfloat16),  # A100
                                                 ((9, 0), torch.bfloat16)])  # H100
def test_auto_precision_follows_the_gpu(gpus, capability, expected):
    gpus(capability)
    assert devices.pick_device_dtype("auto") == ("cuda", expected)
    assert devices.pick_device_dtype("auto", "cuda") == ("cuda", expected)
    assert devices.pick_device_dtype("bfloat16") == ("cuda", torch.bfloat16)  # a chosen precision is honoured
    assert devices.pick_device_dtype("auto", "cpu") == ("cpu", torch.float32)


# ---- the hardware block ----------------------------------------------------------------------------------------

def test_hardware_block_on_gpus(gpus):
    gpus((7, 5), count=2, name="Tesla T4", memory_gib=15)
    assert devices.describe_hardware("cuda", "float16") == {
        "device": "cuda", "dtype": "float16", "gpu_name": "Tesla T4", "gpu_count": 2, "gpu_memory_gib": [15.0, 15.0],
        "driver": "580.65.06", "torch_cuda": "13.0", "cpu_reason": None}


def test_hardware_block_is_in_a_results_file_and_old_files_still_read(no_gpu, gpus, tiny_llama, tmp_path,
                                                                       monkeypatch):
    """The runner records describe_hardware's block once, in run.hardware; the board reads files without it."""
    from leaderboard.board.columns import schema
    from leaderboard.board.frames import leaderboard_frame
    from tests.results_files import SHA_B, result

    gpus((9, 0), count=1, name="NVIDIA H100 80GB HBM3", memory_gib=80)
    monkeypatch.setattr(devices, "resolve_device", lambda requested: ("cpu", None))  # load on the real CPU
    results = runner.run(RunConfig(model=tiny_llama.repo_id, revision=tiny_llama.sha, device="cpu"), tmp_path)
    hardware = json.loads((tmp_path / "results.json").read_text())["run"]["hardware"]
    assert hardware == results["run"]["hardware"] == {
        "device": "cpu", "dtype": "float32", "gpu_name": "NVIDIA H100 80GB HBM3", "gpu_count": 1,
        "gpu_memory_gib": [80.0], "driver": "580.65.06", "torch_cuda": "13.0", "cpu_reason": None}
    old, new = result("org/old"), result("org/new", sha=SHA_B)
    new["run"]["hardware"] = hardware
    assert "hardware" not in old["run"]
    frame = leaderboard_frame([old, new], schema())
    assert len(frame) == 2 and list(frame["device"]) == ["cpu", "cpu"]


# ---- the setting and the worker ---------------------------------------------------------------------------------

def test_the_device_setting_reaches_the_evaluator(tmp_path):
    assert Settings.from_env({}).device == "auto"
    assert Settings.from_env({"LEADERBOARD_DEVICE": " CUDA "}).device == "cuda"
    with pytest.raises(ValueError, match=r"LEADERBOARD_DEVICE must be 'auto', 'cuda' or 'cpu', not 'gpu'"):
        Settings.from_env({"LEADERBOARD_DEVICE": "gpu"})
    settings = Settings.from_env({"LEADERBOARD_DEVICE": "cuda"}, home=tmp_path)
    command = evaluator_process.worker_command(settings, tmp_path / "request.json", tmp_path / "out")
    assert command[command.index("--device") + 1] == "cuda"
    assert settings.as_env()["LEADERBOARD_DEVICE"] == "cuda"  # a Hugging Face Job gets it too
    args = cli._parser().parse_args(["run", "--model", "m"])
    assert args.device == "auto" and cli._config(args).device == "auto"
    assert cli._config(cli._parser().parse_args(["run", "--model", "m", "--device", "cpu"])).device == "cpu"
