"""Explainers: a terminating object and a ClusterView in, a Finding out (docs/explainers.md)."""
