"""The benchmark command runs end to end on a tiny configuration and prints our numbers beside the paper's."""
import pytest
import torch

from solvers.bench.__main__ import main as bench_main
from solvers.npsvc.bench import main


def test_listed_and_help(capsys):
    try:
        bench_main(["npsvc", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    assert "--splits" in capsys.readouterr().out


def test_tiny_accuracy_table(capsys):
    assert main(["--part", "accuracy", "--datasets", "iris", "--splits", "2"]) == 0
    out = capsys.readouterr().out
    assert "| K-NPSVC++ |" in out and "paper (Table 2)" in out and "| SVC |" in out
    assert "| converged |" in out and "2/2 |" in out


def test_accuracy_splits_report_each_runs_status_and_honour_budgets():
    """A method stopped by its iteration budget shows as unconverged; its own budget lets it finish."""
    from solvers.datasets import load
    from solvers.npsvc.experiments import accuracy_splits, summarize

    methods = {"NPSVM": ("npsvm", {})}
    tight = accuracy_splits(load("iris"), methods, n_splits=2, problem_params={}, max_iter=2, svc_c=None)
    assert set(tight["status"]) == {"max_iter"}
    assert summarize(tight)["converged"].tolist() == ["0/2"]
    loose = accuracy_splits(load("iris"), methods, n_splits=2, problem_params={}, max_iter=2, budgets={"NPSVM": 5000},
                            svc_c=None)
    assert summarize(loose)["converged"].tolist() == ["2/2"]


def test_the_table_2_protocol_refuses_a_split_without_test_rows():
    """test_size = 0 made every accuracy NaN and the table "nan ± nan"; now a message before any fit."""
    from solvers.core import InputError
    from solvers.datasets import load
    from solvers.npsvc.experiments import accuracy_splits

    with pytest.raises(InputError, match="no test rows"):
        accuracy_splits(load("iris"), {"TWSVM": ("twsvm", {})}, n_splits=2, problem_params={"test_size": 0.0})


def test_tiny_deep_and_ablation_tables(capsys):
    tiny = ["--epochs", "1", "--seeds", "1", "--priors", "mlp", "--deep-train", "200"]
    assert main(["--part", "deep", "--first-seed", "2", "--clock", "cpu", *tiny]) == 0
    out = capsys.readouterr().out
    assert "| D-NPSVC++ |" in out and "| cross-entropy |" in out and "time / CE" in out and "seeds 2–2" in out
    assert main(["--part", "ablation", "--betas", "0.85,0.1", "--second-step", "on,off", *tiny]) == 0
    out = capsys.readouterr().out
    assert "validation" in out and "β = 0.85" in out and "β = 0.1," in out and "no second step" in out
    assert main(["--part", "ablation", "--vary", "margin=2", "--vary", "tau_bn=eval", *tiny]) == 0
    out = capsys.readouterr().out
    assert "| D-NPSVC++ margin = 2.0 |" in out and "| D-NPSVC++ tau_bn = eval |" in out


@pytest.mark.parametrize("item", ["margin", "bogus=1", "margin=-1", "tau_bn=sideways"])
def test_bad_vary_is_refused_before_any_run(item, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--part", "ablation", "--vary", item])
    assert exc.value.code != 0 and "--vary" in capsys.readouterr().err


def test_tiny_time_table(capsys):
    assert main(["--part", "time", "--datasets", "iris,wine", "--repeats", "2", "--clock", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "cpu seconds, fastest of 2" in out and "K-NPSVC++ / TWSVM" in out
    assert "| iris |" in out and "| wine |" in out  # every dataset asked for, not only the default digits, DNA and USPS
    assert "tol 1e-3 / TWSVM" in out and "test acc % (default / tol 1e-3)" in out
    assert "K-NPSVC++ (default) [s]" in out and "outer it. (default / tol 1e-3)" in out


def test_deep_part_method_subset_warmup_bf16_and_per_epoch_lines(capsys):
    """The GPU script's flags: a subset of methods (no CE, so no ratio column), a warm-up run, bf16 autocast
    and one per-epoch line per run (as many seconds as epochs)."""
    tiny = ["--epochs", "2", "--seeds", "1", "--priors", "mlp", "--deep-train", "200"]
    assert main(["--part", "deep", "--methods", "dnpsvc", "--warmup", "--bf16", "--per-epoch", *tiny]) == 0
    out = capsys.readouterr().out
    assert "| D-NPSVC++ |" in out and "cross-entropy" not in out and "time / CE" not in out
    assert "bf16 autocast" in out and "after a warm-up run" in out
    line = next(row for row in out.splitlines() if row.startswith("D-NPSVC++, seed 0: s/epoch"))
    seconds, accuracies = line.split(": s/epoch ")[1].split(" | test % ")
    assert len(seconds.split()) == 2 and len(accuracies.split()) == 2


def test_bad_method_list_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--part", "deep", "--methods", "dnpsvc,svm"])
    assert exc.value.code != 0 and "--methods" in capsys.readouterr().err


def test_kernel_census_needs_cuda(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--part", "kernels", "--device", "cpu"])
    assert exc.value.code != 0 and "--device cuda" in capsys.readouterr().err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)")
def test_kernel_census_counts_more_kernels_for_the_tau_step(capsys):
    """D-NPSVC++'s step is the θ-step plus the τ-step, so it launches more kernels than cross-entropy's θ-step
    alone, and every step launches some."""
    assert main(["--part", "kernels", "--device", "cuda", "--deep-datasets", "digits", "--deep-train", "300"]) == 0
    cells = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    rows = {c[0].strip(): float(c[1]) for c in cells if c[0].strip() in ("npsvc++", "ce")}
    assert rows["npsvc++"] > rows["ce"] > 0
