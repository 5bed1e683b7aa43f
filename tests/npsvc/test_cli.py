"""The command line for the npsvc methods: one --seed for split and model, --device refused without a GPU."""
import pytest
import torch

from solvers.cli import main


def test_deep_and_kernel_methods_run_from_the_command_line(capsys):
    assert main(["npsvc", "dnpsvc", "--dataset", "iris", "--epochs", "2", "--seed", "3", "--device", "cpu"]) == 0
    assert main(["npsvc", "knpsvc", "--dataset", "iris", "--max-iter", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "D-NPSVC++" in out and "device=cpu" in out and "K-NPSVC++" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU")
def test_cuda_without_a_gpu_exits_2_with_a_message(capsys):
    assert main(["npsvc", "dnpsvc", "--dataset", "iris", "--device", "cuda"]) == 2
    assert "no GPU" in capsys.readouterr().err
