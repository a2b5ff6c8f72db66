"""The runtime: the transport (the only socket code), the executor that carries out the
hub's effects, metrics, per-address limits and the solver's worker processes."""
