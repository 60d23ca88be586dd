"""`kubectl terminating preflight`: before a deletion, whether it will get stuck, and why.

What the deletion takes with it (doomed.py), the cluster as it will be without that
(afterview.py), the judges that name each predicted blocker by its type (judges.py), the
order for a manifest or release (order.py), the report (report.py) and the command
(command.py). `report.preflight` is the entry point that returns the report as a dict.
"""
