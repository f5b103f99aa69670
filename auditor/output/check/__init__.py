"""`audit check --format`: one module per format of the AuditResult (see `auditor.output`)."""
