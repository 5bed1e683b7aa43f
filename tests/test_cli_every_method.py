"""Every family × method that `python -m solvers list` prints has a working --help and solves a tiny problem."""
import importlib

import pytest

from solvers import FAMILIES
from solvers.cli import ALL_FAMILIES, build_parser, main, split_params

TINY_DATA = {
    "foundations": [],
    "sparse": ["--generator", "sparse-regression", "--gen-m", "20", "--gen-n", "30", "--gen-k", "2",
               "--gen-m-test", "0"],
    "multitask": ["--generator", "multitask-subspace", "--gen-d", "5", "--gen-m", "3", "--gen-n-per-task", "8",
                  "--gen-n-test", "4", "--gen-h-true", "1"],
    "smm": ["--generator", "smm-synthetic", "--gen-n-train", "30", "--gen-p", "3", "--gen-q", "4"],
    "metric": ["--generator", "metric-blobs", "--gen-n-samples", "24", "--gen-n-features", "3"],
    "npsvc": ["--generator", "npsvc-blobs", "--gen-n", "45", "--gen-n-classes", "3"],
}
# A small problem of each family whose parameters the tiny data above can hold.
TINY_PROBLEM = {"sparse": ["--s", "2"], "multitask": ["--h", "1"]}

CASES = [(family, method) for family in ALL_FAMILIES
         for method in importlib.import_module(f"solvers.{family}").METHODS]


def test_every_family_is_covered():
    assert set(TINY_DATA) == set(ALL_FAMILIES) and set(FAMILIES) < set(ALL_FAMILIES)


@pytest.mark.parametrize(("family", "method"), CASES)
def test_help(family, method, capsys):
    with pytest.raises(SystemExit) as done:
        main([family, method, "--help"])
    assert done.value.code == 0
    assert f"python -m solvers {family} {method}" in capsys.readouterr().out


@pytest.mark.parametrize(("family", "method"), CASES)
def test_tiny_solve(family, method, capsys):
    flags = TINY_PROBLEM.get(family, [])
    code = main([family, method, *flags, "--max-iter", "3", *TINY_DATA[family]])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "iterations" in captured.out


def test_a_name_shared_by_problem_and_method_has_three_flags():
    fam = importlib.import_module("solvers.npsvc")
    parser = build_parser(fam, "npsvc", "knpsvc")
    problem, method = split_params(parser.parse_args(["--seed", "4"]), fam, "knpsvc")
    assert problem["seed"] == 4 and method["seed"] == 4
    problem, method = split_params(parser.parse_args(["--seed", "4", "--method-seed", "9"]), fam, "knpsvc")
    assert problem["seed"] == 4 and method["seed"] == 9
    problem, method = split_params(parser.parse_args(["--problem-seed", "1"]), fam, "knpsvc")
    assert problem["seed"] == 1 and method["seed"] == fam.METHODS["knpsvc"].params[
        [p.name for p in fam.METHODS["knpsvc"].params].index("seed")].default
