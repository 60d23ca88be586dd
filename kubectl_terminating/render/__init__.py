"""Renderers: a list of Findings in, text out. No cluster access here."""
