"""Readers: one module per file format, each turning bytes into one documented frame or
document plus faults as data (`auditor.readers.base`). Readers never judge a run.

Evidence readers live in `power/` and `placement/`; `evidence_kinds` picks the reader for a
file from its first bytes and extension; `_common` (fault log, decoding, lines, limits, UTC
offsets) and `_xml` (safe XML with lines) are what they share."""
