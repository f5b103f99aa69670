"""`audit archive --format`: one module per format of the ArchiveOutcome."""
