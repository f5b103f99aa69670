"""Readers: one module per file format, each turning bytes into one documented frame or
document plus faults as data (`auditor.readers.base`). Readers never judge a run."""
