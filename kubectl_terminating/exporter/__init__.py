"""`kubectl terminating serve`: the diagnosis run periodically, served as Prometheus metrics."""
