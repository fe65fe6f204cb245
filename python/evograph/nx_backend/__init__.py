"""The ``evograph`` NetworkX backend: NetworkX's functions on evograph's kernels.

NetworkX dispatches a call here when a graph argument names this backend (an evograph
``Snapshot`` or ``Graph``, which are read in place), or when the caller asks for it with
``backend="evograph"`` (a NetworkX graph is then converted into a store in a temporary
directory, durability ``none``, and removed when the converted graph is collected).

Each function takes NetworkX's parameters and returns what NetworkX returns, keyed by the
caller's own nodes. A call this backend cannot honour exactly (a parameter it does not
implement, a multigraph, a weight given as a function) is declined by ``can_run``, so
NetworkX runs it instead. On a store's snapshot, ``weight`` names nothing: a weighted
store's edges have one weight, and an unweighted store's weigh 1.

The package: `graph.py` (the graphs read), `functions.py` (the functions),
`interface.py` (what NetworkX calls).
"""

from .interface import _FUNCTIONS, BackendInterface, get_info

__all__ = ["BackendInterface", "get_info", "_FUNCTIONS"]
