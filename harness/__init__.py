"""Multi-engine parity and replay evaluation harness for rigid-body dynamics.

Engine-blind core: conventions, protocol, registry, tolerances, stages, evidence, report
and CLI. Engine adapters live in the ``engines`` package, fixtures in ``fixtures``.
"""
__version__ = "0.1.0"
