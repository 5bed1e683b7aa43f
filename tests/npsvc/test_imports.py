"""torch is loaded by a deep run, never by the family, the kernel methods or their estimators: a lecture server's
workers and the NPSVC++ page at its defaults (TWSVM and K-NPSVC++) then keep ≈ 1 s of import and a few hundred MB
per process. Checked in a fresh interpreter, since this test session has imported torch long before."""
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from solvers import npsvc as fam

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1, 1, (15, 2)), rng.normal(1, 1, (15, 2))])
    y = np.repeat([0, 1], 15)
    problem = fam.problem_from_arrays(X, y)
    for method in ("twsvm", "pin-twsvm", "npsvm", "lstsvm", "knpsvc"):
        fam.solve(problem, method, tol=1e-6, max_iter=20)
    for estimator in (fam.TWSVM(), fam.LSTSVM(), fam.KNPSVC()):
        estimator.fit(X, y).predict(X)
    print("kernel methods:", "torch" in sys.modules)
    fam.DNPSVC(epochs=1, batch_size=10).fit(X, y).predict(X)
    print("deep model:", "torch" in sys.modules)
""")


def test_only_a_deep_run_imports_torch():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["kernel methods: False", "deep model: True"]


def test_the_warm_up_pays_what_a_first_deep_run_would():
    """dnpsvc.warm_up (run by a lecture server's workers when the page opens) reaches the optimiser's first step,
    which imports torch's compiler modules: the costly part of a process's first deep run after torch itself."""
    script = "import sys\nfrom solvers.npsvc import dnpsvc\ndnpsvc.warm_up()\nprint('torch._dynamo' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
