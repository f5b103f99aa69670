"""`audit compare --format`: one module per format of the Comparison."""
