"""The base algorithmic maps that Algorithms 1 and 2 accelerate.

* `PGMap`: T_PG^λ of (5), w⁺ = P_{A_s}(z − λ∇f(z)); one GE. The step also gives the
  residual (24) at z for free.
* `LiLinMap`: one iteration of Li & Lin's monotone accelerated proximal gradient
  (NeurIPS 2015, their Algorithm 1) with prox = P_{A_s}, the "PG-LL" baseline; two GE.
  From x^k (= the point handed in, z^k when the paper's accelerations are on, "APG-LL+"):
      y^k     = x^k + (t_{k−1}/t_k)(v^k − x^k) + ((t_{k−1} − 1)/t_k)(x^k − x^{k−1})
      v^{k+1} = P_{A_s}(y^k − λ∇f(y^k)),   p^{k+1} = P_{A_s}(x^k − λ∇f(x^k))
      x^{k+1} = v^{k+1} if f(v^{k+1}) ≤ f(p^{k+1}) else p^{k+1},   t_{k+1} = (1 + √(1 + 4t_k²))/2
  (Li–Lin call v "z"; we rename it to avoid a clash with the paper's z^k). x⁰ = x¹ = v¹ = w⁰,
  t₀ = 0, t₁ = 1, and both step sizes equal PG's λ (the paper does not say; seed digest §2.6).
  The residual at x^k comes from p^{k+1}. Margins of y are linear combinations of cached ones.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core import fista_next_t
from .problem import Point, SparseProblem


@dataclass
class Step:
    next: Point  # w^{k+1}
    residual: float  # (24) at the point the step started from
    grad_evals: int


class PGMap:
    grad_evals_per_step = 1

    def __init__(self, problem: SparseProblem, start: Point) -> None:
        self.problem = problem

    def __call__(self, z: Point) -> Step:
        grad = self.problem.full_gradient(z.u, z.w)
        nxt, res = self.problem.pg_step(z, grad)
        return Step(nxt, res, 1)


class LiLinMap:
    grad_evals_per_step = 2

    def __init__(self, problem: SparseProblem, start: Point) -> None:
        self.problem = problem
        self.x_prev = start
        self.v = start
        self.t_prev, self.t = 0.0, 1.0

    def __call__(self, x: Point) -> Step:
        pb = self.problem
        a = self.t_prev / self.t
        b = (self.t_prev - 1.0) / self.t
        y_w = x.w + a * (self.v.w - x.w) + b * (x.w - self.x_prev.w)
        y_u = x.u + a * (self.v.u - x.u) + b * (x.u - self.x_prev.u)
        y = Point(y_w, y_u, x.J, float("nan"))
        v_next, _ = pb.pg_step(y, pb.full_gradient(y_u, y_w))
        p_next, res = pb.pg_step(x, pb.full_gradient(x.u, x.w))
        self.x_prev, self.v = x, v_next
        self.t_prev, self.t = self.t, fista_next_t(self.t)
        return Step(v_next if v_next.f <= p_next.f else p_next, res, 2)
