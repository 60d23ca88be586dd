"""Explainers: a terminating object and a ClusterView in, a Finding out (docs/explainers.md).

No HTTP here: every related object is read through the view (the named reads in reads.py),
by way of a Facts object that makes shared reads once and turns a failed one into a warning.
"""
