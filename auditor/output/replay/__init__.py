"""`audit replay --format`: one module per format of the ReplayResult."""
