"""optlab solvers: five method families from recent papers, over one set of contracts (solvers.core)."""

FAMILIES = ("sparse", "multitask", "smm", "metric", "npsvc")
