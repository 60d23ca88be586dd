"""`kubectl terminating fix`: the remedies the diagnosis proves safe, dry-run by default."""
