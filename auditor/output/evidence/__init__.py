"""`audit evidence --format`: one module per format of the EvidenceSummary."""
