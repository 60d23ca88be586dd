"""`kubectl terminating fix`: the remedies the diagnosis proves safe, dry-run by default.

plan (pure: findings -> proposals and refusals) -> observe (read each target and the facts
each remedy rests on) -> digest (what the operator confirms) -> apply (read the facts again,
then the narrowest write) -> audit.
"""
