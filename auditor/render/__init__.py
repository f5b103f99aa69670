"""Renderers: they only format an `AuditResult` (text for a terminal, JSON for tools)."""
