"""Diagnostics of finished paths for plots and audits (no solver work is timed here)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.neighbors import KNeighborsClassifier

from .path import PathResult
from .ranges import range_lower_ends
from .problem import TripletProblem, margin_partition


def safety_audit(problem: TripletProblem, screened: PathResult, naive: PathResult) -> pd.DataFrame:
    """Per λ: screened triplets whose naive-solution margin contradicts the verdict (must be 0) and ‖ΔM‖_F.

    A verdict is contradicted when ⟨H, M_naive⟩ is beyond the threshold by more than the naive solution's own
    uncertainty ‖H‖·sqrt(2 gap/λ) (so a correct verdict is never counted).
    """
    rows = []
    steps = min(len(screened.solutions), len(naive.solutions))
    for s in range(1, steps):
        lam = naive.table["lam"].iloc[s]
        x = problem.margins(naive.solutions[s])
        delta = problem.h_norm * math.sqrt(2 * naive.table["gap"].iloc[s] / lam)
        row = {"step": s, "lam": lam, "neg_log10_lam": -math.log10(lam),
               "dM": float(np.linalg.norm(screened.solutions[s] - naive.solutions[s]))}
        if len(screened.masks) >= s:
            in_L, in_R = screened.masks[s - 1]
            row["false_L"] = int(np.sum(in_L & (x >= 1 - problem.gamma + delta)))
            row["false_R"] = int(np.sum(in_R & (x <= 1 - delta)))
        rows.append(row)
    return pd.DataFrame(rows)


def range_screening_rates(problem: TripletProblem, path: PathResult) -> tuple[np.ndarray, np.ndarray]:
    """Fig. 6: rate[s, t] = share of L* ∪ R* at λ_t screened by the RRPB range from reference λ_s (t ≥ s).

    Uses each step's solution and ε = sqrt(2 gap/λ); targets above the reference are left as NaN.
    """
    lams = path.table["lam"].to_numpy()
    n = len(lams)
    rates = np.full((n, n), np.nan)
    truth = []
    for M in path.solutions:
        L, R = margin_partition(problem.margins(M), problem.gamma)
        truth.append(max(int(L.sum() + R.sum()), 1))
    for s in range(n):
        M0 = path.solutions[s]
        eps = math.sqrt(2 * max(path.table["gap"].iloc[s], 0.0) / lams[s])
        r_end, l_end = range_lower_ends(problem.margins(M0), problem.h_norm, float(np.linalg.norm(M0)), eps,
                                        lams[s], problem.gamma)
        ends = np.sort(np.minimum(r_end, l_end))
        targets = lams[s:]
        rates[s, s:] = np.searchsorted(ends, targets, side="left") / np.array(truth[s:])
    return lams, rates


def knn_accuracy(problem: TripletProblem, M: np.ndarray, n_neighbors: int = 3) -> float:
    """Leave-one-out k-NN accuracy of the problem's samples in the metric M (on the triplet training data)."""
    Mat = problem.as_matrix(M)
    w, V = np.linalg.eigh(Mat)
    Z = problem.X @ (V * np.sqrt(np.maximum(w, 0.0)))
    knn = KNeighborsClassifier(n_neighbors=n_neighbors + 1).fit(Z, problem.codes)
    neighbours = knn.kneighbors(Z, return_distance=False)[:, 1:]  # drop the sample itself
    votes = problem.codes[neighbours]
    predicted = np.array([np.bincount(v).argmax() for v in votes])
    return float(np.mean(predicted == problem.codes))


def embed(problem: TripletProblem, M: np.ndarray, n_components: int = 2) -> np.ndarray:
    """x ↦ Λ^{1/2} Vᵀ x restricted to the top eigenvectors of M (the learned metric's coordinates)."""
    w, V = np.linalg.eigh(problem.as_matrix(M))
    top = np.argsort(w)[::-1][:n_components]
    return problem.X @ (V[:, top] * np.sqrt(np.maximum(w[top], 0.0)))
