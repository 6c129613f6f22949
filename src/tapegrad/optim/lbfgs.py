"""L-BFGS with an optional strong-Wolfe line search, as torch.optim.LBFGS."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make
from ..autograd.grad_mode import enable_grad
from ..nn._inplace import bump_version
from ._helpers import check_lr
from .optimizer import Optimizer

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS, closure-based: ``step(closure)`` runs up to ``max_iter`` quasi-Newton
    iterations, calling ``closure()`` (which must zero the gradients, compute the loss, call
    ``backward()`` and return the loss) once per function evaluation.

    Source: J. Nocedal, "Updating Quasi-Newton Matrices with Limited Storage" (Math. Comp. 1980)
    and Nocedal & Wright, "Numerical Optimization", algorithm 7.4 (the two-loop recursion) and
    algorithms 3.5/3.6 (the strong-Wolfe bracketing and zoom line search, with cubic
    interpolation); the control flow (first step ``min(1, 1/|g|_1) * lr``, initial Hessian
    scaling ``y.s / y.y``, curvature pairs kept only when ``y.s > 1e-10``, the stopping tests)
    follows M. Schmidt's minFunc, as torch's documentation says torch's does. Per iteration::

        d = -H g            (two-loop recursion over the last ``history_size`` pairs (s, y))
        t = min(1, 1 / sum|g|) * lr on the very first iteration, lr afterwards
        stop if g.d > -tolerance_change
        x = x + t d         (t from the strong-Wolfe search when line_search_fn='strong_wolfe')
        stop after max_iter iterations or max_eval evaluations, or when max|g| <=
        tolerance_grad, max|t d| <= tolerance_change or |loss - previous loss| <
        tolerance_change

    Args: ``lr`` (float or 1-element Tensor, default 1), ``max_iter`` (20), ``max_eval``
    (default ``max_iter * 5 // 4``), ``tolerance_grad`` (1e-7), ``tolerance_change`` (1e-9),
    ``history_size`` (100), ``line_search_fn`` (None or 'strong_wolfe').

    State (kept on the first parameter, as torch): ``func_evals``, ``n_iter``, ``d``, ``t``,
    ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``.
    ``step`` returns the loss of the first closure call.

    Raises ValueError "Invalid learning rate: ..." / "Tensor lr must be 1-element" and "LBFGS
    doesn't support per-parameter options (parameter groups)"; ``step()`` without a closure is
    a TypeError; RuntimeError "only 'strong_wolfe' is supported" for another
    ``line_search_fn`` (at the first iteration that needs it), as torch.

    Rounding: quantities torch keeps as 0-d tensors (dot products, ``t`` on the first
    iteration, ``H_diag``, ``ro``) are NumPy scalars of the parameters' dtype here, so they
    round as torch's do; dot products may still differ in the last bit (summation order).
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        lr = check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- flat views of the parameters and gradients ----------------------------------------
    def _dtype(self):
        return np.result_type(*[p._data.dtype for p in self._params])

    def _gather_flat_grad(self):
        dt = self._dtype()
        parts = [np.zeros(p._data.size, dt) if p._grad is None
                 else p._grad._data.reshape(-1) for p in self._params]
        return np.concatenate(parts).astype(dt, copy=False)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p._data.size
            arr = p._data
            arr += (arr.dtype.type(step_size) * update[offset:offset + n]).reshape(arr.shape)
            bump_version(p)
            offset += n

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, data):
        for p, d in zip(self._params, data):
            p._data[...] = d
            bump_version(p)

    def _evaluate(self, closure):
        with enable_grad():
            return _loss_value(closure())

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ---- the step ----------------------------------------------------------------------------
    def step(self, closure):
        """Run one L-BFGS optimization (up to ``max_iter`` iterations); returns the loss of the
        first closure call."""
        group = self.param_groups[0]
        lr = float(group["lr"].item()) if isinstance(group["lr"], Tensor) else group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = _loss_value(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        dt = flat_grad.dtype.type
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d = _array(state.get("d"))
        t = _scalar(state.get("t"))
        old_dirs = [_array(v) for v in state.get("old_dirs", [])]
        old_stps = [_array(v) for v in state.get("old_stps", [])]
        ro = [_scalar(v) for v in state.get("ro", [])]
        H_diag = _scalar(state.get("H_diag"))
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = [_scalar(v) for v in state["al"]] if "al" in state else None

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # direction: -H g by the two-loop recursion
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * dt(t)
                ys = np.dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(dt(1.0) / ys)
                    H_diag = ys / np.dot(y, y)
                if al is None:
                    al = [None] * history_size
                    state["al"] = al            # (the key's place in the state, as torch)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = np.dot(old_stps[i], q) * ro[i]
                    q += -al[i] * old_dirs[i]
                r = q * dt(H_diag)
                for i in range(len(old_dirs)):
                    be_i = np.dot(old_dirs[i], r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
                d = r

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # step length
            if state["n_iter"] == 1:
                t = min(1.0, dt(1.0) / np.abs(flat_grad).sum()) * lr
            else:
                t = lr

            gtd = np.dot(flat_grad, d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, step, direction):
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = self._evaluate(closure)
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * dt(t)).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _tensor(d)
        state["t"] = _tensor(t)
        state["old_dirs"] = [_tensor(v) for v in old_dirs]
        state["old_stps"] = [_tensor(v) for v in old_stps]
        state["ro"] = [_tensor(v) for v in ro]
        state["H_diag"] = _tensor(H_diag)
        state["prev_flat_grad"] = _tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = [_tensor(v) for v in al]
        return orig_loss


def _loss_value(loss):
    """The closure's loss as a Python float (without the requires-grad conversion warning)."""
    if isinstance(loss, Tensor):
        return float(loss._data.reshape(()))
    return float(loss)


def _tensor(v):
    """State value as torch keeps it: arrays and NumPy scalars (0-d tensors in torch) become
    Tensors; Python numbers and None stay as they are."""
    if isinstance(v, (np.ndarray, np.generic)):
        return _make(np.array(v, copy=True))
    return v


def _array(v):
    return None if v is None else np.array(v._data if isinstance(v, Tensor) else v, copy=True)


def _scalar(v):
    """A state value back as a NumPy scalar (0-d tensor) or a Python number."""
    if isinstance(v, Tensor):
        return v._data[()]
    return v


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clipped to
    ``bounds`` (default: the interval between x1 and x2); the midpoint when the cubic has no
    real minimizer (Nocedal & Wright, eq. 3.59)."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search for a step ``t`` along ``d`` satisfying the strong Wolfe conditions
    (sufficient decrease with ``c1``, curvature with ``c2``): bracketing by cubic extrapolation,
    then zoom by safeguarded cubic interpolation (Nocedal & Wright algorithms 3.5 and 3.6, with
    minFunc's insufficient-progress safeguard). Returns (loss, flat grad, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = np.dot(g_new, d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing phase: points are [t, f, g, gtd]
    bracket = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.copy(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [[t, f_new, g_new, None]]
            done = True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.copy(), gtd_new]]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = np.dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]

    # zoom phase
    insuf_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:
        (t0, f0, _, gtd0), (t1, f1, _, gtd1) = bracket
        if abs(t1 - t0) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(t0, f0, gtd0, t1, f1, gtd1)
        tmax, tmin = max(t0, t1), min(t0, t1)
        eps = 0.1 * (tmax - tmin)
        if min(tmax - t, t - tmin) < eps:
            if insuf_progress or t >= tmax or t <= tmin:
                t = tmax - eps if abs(t - tmax) < abs(t - tmin) else tmin + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = np.dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.copy(), gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = list(bracket[low])
            bracket[low] = [t, f_new, g_new.copy(), gtd_new]
    t, f_new, g_new = bracket[low][0], bracket[low][1], bracket[low][2]
    return f_new, g_new, t, evals
