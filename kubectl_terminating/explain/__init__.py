"""Pure explainers: JSON objects plus a ClusterView in, Findings out. No I/O here."""
