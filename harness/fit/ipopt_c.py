"""A ctypes binding to IPOPT's C interface (IpStdCInterface.h, IPOPT 3.14), a drop-in for the
part of ``cyipopt.Problem`` that ``Collocator.solve`` uses.

Why it exists: cyipopt's Cython callbacks copy every array that crosses the boundary
(x, λ, g, ∇f, Jacobian and Hessian values) element by element, indexing an untyped
ndarray in a Python-level loop (cyipopt 1.7, ``ipopt_wrapper.pyx``): one NumPy scalar
allocation per element. Measured with
perf on the pendulum benchmark (n = 2001 variables, m = 1998 constraints, 8991 Jacobian and
2999 Hessian nonzeros, 4 IPOPT iterations) that copying was about 40 % of the ~62 ms
solve while our callbacks took ~6 ms. Here every copy is one vectorised NumPy assignment
into a view of IPOPT's buffer. We wrote this ourselves only because of that overhead: the
IPOPT library itself still comes from the pinned ``cyipopt-wheels`` distribution (IPOPT
3.14.11 with MUMPS in its ``cyipopt_wheels.libs`` directory); no new dependency.

Interface (numbers are IPOPT's: x, bounds, g in the problem's own units):

    Problem(n, m, problem_obj, lb, ub, cl, cu)        n variables, m constraints
        problem_obj.objective(x) -> float
        problem_obj.gradient(x) -> (n,)
        problem_obj.constraints(x) -> (m,)
        problem_obj.jacobian(x) -> (nnz_J,),   jacobianstructure() -> (rows, cols)
        problem_obj.hessian(x, lagrange (m,), obj_factor) -> (nnz_H,)  lower triangle,
            hessianstructure() -> (rows, cols)            (optional: without ``hessian``
            IPOPT runs ``hessian_approximation limited-memory``, as cyipopt does)
        problem_obj.intermediate(alg_mod, iter_count, obj_value, inf_pr, inf_du, mu,
            d_norm, regularization_size, alpha_du, alpha_pr, ls_trials) -> bool (optional;
            None counts as True, False stops IPOPT with User_Requested_Stop)
    Problem.add_option(name, value) / solve(x0, options=None) -> (x, info)

``info``: x, g (m,), obj_val, mult_g (m,), mult_x_L (n,), mult_x_U (n,), status (int,
IPOPT's ApplicationReturnStatus), status_name (the enum's name), status_msg (a one-line
gloss of it, ours; cyipopt's messages differ in wording). Options: str → AddIpoptStrOption,
float → AddIpoptNumOption, int → AddIpoptIntOption; an option IPOPT rejects raises
``ValueError``. An exception raised in a callback is stored, IPOPT is told the evaluation
failed (and stopped at the next intermediate callback), and the exception is re-raised after
IpoptSolve returns; ``EvaluationError`` instead only tells IPOPT the point cannot be
evaluated (it then cuts the step), like cyipopt's CyIpoptEvaluationError. Infinite bounds go
to IPOPT as ±1e19 (its default nlp_lower/upper_bound_inf).
"""
from __future__ import annotations

import ctypes
import glob
import os
from ctypes import POINTER, c_bool, c_char_p, c_double, c_int32, c_void_p
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

IPOPT_INF = 1e19                   # IPOPT's default nlp_upper_bound_inf (−1e19 lower)

ipindex, ipnumber = c_int32, c_double          # IPOPT 3.14 defaults (no IPOPT_INT64)
_pnum, _pidx = POINTER(ipnumber), POINTER(ipindex)

Eval_F_CB = ctypes.CFUNCTYPE(c_bool, ipindex, _pnum, c_bool, _pnum, c_void_p)
Eval_Grad_F_CB = ctypes.CFUNCTYPE(c_bool, ipindex, _pnum, c_bool, _pnum, c_void_p)
Eval_G_CB = ctypes.CFUNCTYPE(c_bool, ipindex, _pnum, c_bool, ipindex, _pnum, c_void_p)
Eval_Jac_G_CB = ctypes.CFUNCTYPE(c_bool, ipindex, _pnum, c_bool, ipindex, ipindex, _pidx,
                                 _pidx, _pnum, c_void_p)
Eval_H_CB = ctypes.CFUNCTYPE(c_bool, ipindex, _pnum, c_bool, ipnumber, ipindex, _pnum, c_bool,
                             ipindex, _pidx, _pidx, _pnum, c_void_p)
Intermediate_CB = ctypes.CFUNCTYPE(c_bool, ipindex, ipindex, ipnumber, ipnumber, ipnumber,
                                   ipnumber, ipnumber, ipnumber, ipnumber, ipnumber, ipindex,
                                   c_void_p)

# ApplicationReturnStatus (IpReturnCodes_inc.h): value -> (enum name, our one-line gloss)
STATUS = {
    0: ("Solve_Succeeded", "converged: a local optimum within the tolerances"),
    1: ("Solved_To_Acceptable_Level", "stopped at the looser 'acceptable' tolerances"),
    2: ("Infeasible_Problem_Detected", "converged to a locally infeasible point"),
    3: ("Search_Direction_Becomes_Too_Small", "stopped: the steps became too small"),
    4: ("Diverging_Iterates", "stopped: the iterates diverge"),
    5: ("User_Requested_Stop", "stopped by the intermediate callback"),
    6: ("Feasible_Point_Found", "a feasible point of a square problem"),
    -1: ("Maximum_Iterations_Exceeded", "stopped at max_iter"),
    -2: ("Restoration_Failed", "the restoration phase failed"),
    -3: ("Error_In_Step_Computation", "the search direction could not be computed"),
    -4: ("Maximum_CpuTime_Exceeded", "stopped at max_cpu_time"),
    -5: ("Maximum_WallTime_Exceeded", "stopped at max_wall_time"),
    -10: ("Not_Enough_Degrees_Of_Freedom", "fewer free variables than equality constraints"),
    -11: ("Invalid_Problem_Definition", "the problem definition is invalid"),
    -12: ("Invalid_Option", "an option is invalid"),
    -13: ("Invalid_Number_Detected", "a callback returned NaN or inf"),
    -100: ("Unrecoverable_Exception", "IPOPT raised an exception it could not handle"),
    -101: ("NonIpopt_Exception_Thrown", "an exception from outside IPOPT reached it"),
    -102: ("Insufficient_Memory", "out of memory"),
    -199: ("Internal_Error", "IPOPT internal error"),
}


class EvaluationError(Exception):
    """Raise in a callback to tell IPOPT the point cannot be evaluated (not an error)."""


class IpoptCUnavailable(ImportError):
    """The IPOPT shared library of the cyipopt-wheels distribution cannot be loaded."""


_LIB = None


def library_path() -> str:
    """The libipopt shipped by cyipopt-wheels: ``cyipopt_wheels.libs/libipopt*.so*`` beside
    the installed ``cyipopt`` package (found from the distribution's files, without
    importing it)."""
    # importlib.metadata costs every command about 20 ms to import: here only when used
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        package = distribution("cyipopt-wheels").locate_file("cyipopt")
    except PackageNotFoundError:
        package = None
    if package is None or not os.path.isdir(package):
        raise IpoptCUnavailable("the cyipopt package (cyipopt-wheels) is not installed")
    libs = os.path.join(os.path.dirname(package), "cyipopt_wheels.libs")
    found = sorted(glob.glob(os.path.join(libs, "libipopt*.so*")))
    if not found:
        raise IpoptCUnavailable(f"no libipopt*.so* in {libs}")
    return found[0]


def load() -> ctypes.CDLL:
    """The loaded IPOPT library with argument types set (cached). Its dependencies (MUMPS,
    OpenBLAS, gfortran, quadmath) sit in the same directory without an RPATH to find them,
    so they are loaded first by full path, each once its own dependencies are in."""
    global _LIB
    if _LIB is not None:
        return _LIB
    path = library_path()
    deps = [p for p in sorted(glob.glob(os.path.join(os.path.dirname(path), "*.so*")))
            if p != path]
    errors = {}
    while deps:
        left = []
        for p in deps:
            try:
                ctypes.CDLL(p)         # RTLD_LOCAL: found by soname, not exported
            except OSError as e:
                left.append(p)
                errors[p] = e
        if len(left) == len(deps):
            break
        deps = left
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        unloaded = "; ".join(f"{os.path.basename(k)}: {v}" for k, v in errors.items()
                             if k in deps)
        raise IpoptCUnavailable(f"cannot load {path}: {e}"
                                + (f" (dependencies not loaded: {unloaded})" if unloaded
                                   else "")) from e
    lib.CreateIpoptProblem.restype = c_void_p
    lib.CreateIpoptProblem.argtypes = [ipindex, _pnum, _pnum, ipindex, _pnum, _pnum, ipindex,
                                       ipindex, ipindex, Eval_F_CB, Eval_G_CB, Eval_Grad_F_CB,
                                       Eval_Jac_G_CB, Eval_H_CB]
    lib.FreeIpoptProblem.restype = None
    lib.FreeIpoptProblem.argtypes = [c_void_p]
    for name, vt in (("AddIpoptStrOption", c_char_p), ("AddIpoptNumOption", ipnumber),
                     ("AddIpoptIntOption", ipindex)):
        f = getattr(lib, name)
        f.restype, f.argtypes = c_bool, [c_void_p, c_char_p, vt]
    lib.SetIntermediateCallback.restype = c_bool
    lib.SetIntermediateCallback.argtypes = [c_void_p, Intermediate_CB]
    lib.IpoptSolve.restype = ctypes.c_int
    lib.IpoptSolve.argtypes = [c_void_p, _pnum, _pnum, _pnum, _pnum, _pnum, _pnum, c_void_p]
    _LIB = lib
    return lib


def _view(ptr, k):
    return np.ctypeslib.as_array(ptr, shape=(k,))


def _bounds(v, k, name):
    a = np.array(v, dtype=float).ravel()
    if a.size != k:
        raise ValueError(f"{name} has length {a.size}, expected {k}")
    return np.clip(a, -IPOPT_INF, IPOPT_INF)        # ±inf → ±1e19: no bound for IPOPT


class Problem:
    """One NLP: min f(x) s.t. cl ≤ g(x) ≤ cu, lb ≤ x ≤ ub (n variables, m constraints)."""

    def __init__(self, n, m, problem_obj, lb=None, ub=None, cl=None, cu=None):
        self.n, self.m, self.obj = int(n), int(m), problem_obj
        self.lb = _bounds(-np.inf * np.ones(n) if lb is None else lb, n, "lb")
        self.ub = _bounds(np.inf * np.ones(n) if ub is None else ub, n, "ub")
        self.cl = _bounds(-np.inf * np.ones(m) if cl is None else cl, m, "cl")
        self.cu = _bounds(np.inf * np.ones(m) if cu is None else cu, m, "cu")
        for name in ("objective", "gradient") + (("constraints", "jacobian") if m else ()):
            if not callable(getattr(problem_obj, name, None)):
                raise ValueError(f"problem_obj has no {name!r} callback")
        self.has_hessian = callable(getattr(problem_obj, "hessian", None))
        self.options: dict = {}
        if not self.has_hessian:
            self.options["hessian_approximation"] = "limited-memory"
        self._exc = None

    def add_option(self, name: str | bytes, value: str | bytes | int | float) -> None:
        self.options[name.decode() if isinstance(name, bytes) else str(name)] = value

    # ------------------------------------------------------------ structure
    def _structure(self, which, k):
        fn = getattr(self.obj, which + "structure", None)
        if fn is None:
            if which == "jacobian":
                r, c = np.unravel_index(np.arange(self.m * self.n), (self.m, self.n))
            else:
                r, c = np.nonzero(np.tril(np.ones((self.n, self.n))))
        else:
            r, c = fn()
        r = np.asarray(r, dtype=np.int32).ravel()
        c = np.asarray(c, dtype=np.int32).ravel()
        if r.size != k or c.size != k:
            raise ValueError(f"{which}structure gives {r.size} rows and {c.size} columns, "
                             f"expected {k}")
        return r, c

    def _nnz(self, which, dense):
        fn = getattr(self.obj, which + "structure", None)
        return len(fn()[0]) if fn is not None else dense

    # ------------------------------------------------------------ solve
    def _guard(self, fn):
        """Run fn() for IPOPT: True on success; False (exception stored unless it is an
        EvaluationError) on failure; False at once once an exception is stored."""
        if self._exc is not None:
            return False
        try:
            fn()
            return True
        except EvaluationError:
            return False
        except BaseException as e:            # re-raised after IpoptSolve returns
            self._exc = e
            return False

    def solve(self, x0: ArrayLike, options: dict | None = None
              ) -> tuple[NDArray[np.float64], dict]:
        """Solve from x0 (n,); returns (x (n,), info) (``info``: the module docstring)."""
        lib = load()
        n, m = self.n, self.m
        nnz_j = self._nnz("jacobian", m * n) if m else 0
        nnz_h = self._nnz("hessian", n * (n + 1) // 2) if self.has_hessian else 0
        self._exc = None
        # the ctypes callback objects must outlive IpoptSolve: held here until return
        cbs = self._eval_callbacks()
        icb = self._intermediate_callback()
        x = np.array(x0, dtype=float).ravel()
        if x.size != n:
            raise ValueError(f"x0 has length {x.size}, expected {n}")
        g = np.zeros(m)
        mult_g, mult_x_L, mult_x_U = np.zeros(m), np.zeros(n), np.zeros(n)
        obj_val = ipnumber(0.0)

        def p(a: NDArray[np.float64]) -> Any:
            return a.ctypes.data_as(_pnum)
        prob = lib.CreateIpoptProblem(n, p(self.lb), p(self.ub), m, p(self.cl), p(self.cu),
                                      nnz_j, nnz_h, 0, *cbs)
        if not prob:
            raise RuntimeError("CreateIpoptProblem failed (check n, m, bounds and sizes)")
        try:
            if not lib.SetIntermediateCallback(prob, icb):
                raise RuntimeError("SetIntermediateCallback failed")
            opts = dict(self.options)
            opts.update(options or {})
            for k, v in opts.items():
                _add_option(lib, prob, k, v)
            status = int(lib.IpoptSolve(prob, p(x), p(g), ctypes.byref(obj_val), p(mult_g),
                                        p(mult_x_L), p(mult_x_U), None))
        finally:
            lib.FreeIpoptProblem(prob)
            del cbs, icb
        if self._exc is not None:
            exc, self._exc = self._exc, None
            raise exc
        name, msg = STATUS.get(status, ("Unknown", "Unknown status"))
        info = {"x": x, "g": g, "obj_val": float(obj_val.value), "mult_g": mult_g,
                "mult_x_L": mult_x_L, "mult_x_U": mult_x_U, "status": status,
                "status_name": name, "status_msg": msg}
        return x, info

    def _eval_callbacks(self) -> tuple:
        """The ctypes callbacks of f, g, ∇f, the Jacobian and the Hessian, in
        CreateIpoptProblem's order; each copies through a view of IPOPT's buffer."""
        n, m, obj = self.n, self.m, self.obj

        def _x(x):
            return _view(x, n).copy()

        def eval_f(n_: int, x: Any, new_x: bool, out: Any, ud: Any) -> bool:
            def run() -> None:
                out[0] = float(obj.objective(_x(x)))
            return self._guard(run)

        def eval_grad_f(n_: int, x: Any, new_x: bool, out: Any, ud: Any) -> bool:
            def run() -> None:
                _view(out, n)[:] = np.asarray(obj.gradient(_x(x)), dtype=float).ravel()
            return self._guard(run)

        def eval_g(n_: int, x: Any, new_x: bool, m_: int, out: Any, ud: Any) -> bool:
            def run() -> None:
                if m:
                    _view(out, m)[:] = np.asarray(obj.constraints(_x(x)), dtype=float).ravel()
            return self._guard(run)

        def eval_jac_g(n_: int, x: Any, new_x: bool, m_: int, k: int, rows: Any, cols: Any,
                       values: Any, ud: Any) -> bool:
            def run() -> None:
                if not values:
                    r, c = self._structure("jacobian", k)
                    _view(rows, k)[:] = r
                    _view(cols, k)[:] = c
                else:
                    _view(values, k)[:] = np.asarray(obj.jacobian(_x(x)), dtype=float).ravel()
            return self._guard(run)

        def eval_h(n_: int, x: Any, new_x: bool, obj_factor: float, m_: int, lam: Any,
                   new_lam: bool, k: int, rows: Any, cols: Any, values: Any, ud: Any) -> bool:
            def run() -> None:
                if not self.has_hessian:
                    raise RuntimeError("IPOPT asked for the Hessian but problem_obj has none")
                if not values:
                    r, c = self._structure("hessian", k)
                    _view(rows, k)[:] = r
                    _view(cols, k)[:] = c
                else:
                    lg = _view(lam, m).copy() if m else np.zeros(0)
                    _view(values, k)[:] = np.asarray(
                        obj.hessian(_x(x), lg, float(obj_factor)), dtype=float).ravel()
            return self._guard(run)

        return (Eval_F_CB(eval_f), Eval_G_CB(eval_g), Eval_Grad_F_CB(eval_grad_f),
                Eval_Jac_G_CB(eval_jac_g), Eval_H_CB(eval_h))

    def _intermediate_callback(self) -> Intermediate_CB:
        """The ctypes intermediate callback: problem_obj.intermediate if it has one (None
        counts as True), False once a callback's exception is stored."""
        inter = getattr(self.obj, "intermediate", None)

        def intermediate(alg_mod: int, iter_count: int, obj_value: float, inf_pr: float,
                         inf_du: float, mu: float, d_norm: float, reg_size: float, alpha_du: float,
                         alpha_pr: float, ls_trials: int, ud: Any) -> bool:
            if self._exc is not None:
                return False
            if inter is None:
                return True
            out = []
            ok = self._guard(lambda: out.append(inter(
                alg_mod, iter_count, obj_value, inf_pr, inf_du, mu, d_norm, reg_size,
                alpha_du, alpha_pr, ls_trials)))
            return ok and (out[0] is None or bool(out[0]))

        return Intermediate_CB(intermediate)


def _add_option(lib, prob, key, value):
    k = key.encode() if isinstance(key, str) else bytes(key)
    if isinstance(value, (str, bytes)):
        ok = lib.AddIpoptStrOption(prob, k, value.encode() if isinstance(value, str) else value)
    elif isinstance(value, (bool, np.bool_)):
        raise TypeError(f"IPOPT option {key!r}: give 'yes'/'no', not {value!r}")
    elif isinstance(value, (int, np.integer)):
        ok = lib.AddIpoptIntOption(prob, k, int(value))
    elif isinstance(value, (float, np.floating)):
        ok = lib.AddIpoptNumOption(prob, k, float(value))
    else:
        raise TypeError(f"IPOPT option {key!r}: unsupported value type {type(value).__name__}")
    if not ok:
        raise ValueError(f"IPOPT rejected option {key!r} = {value!r} (unknown name, wrong "
                         "type or value out of range)")
