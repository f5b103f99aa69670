"""Protocol B's rules, one module each (`bNNNN_<what>.py`, code `BNNNN`), discovered by the
protocol (`Protocol.rules`). Section NN of the code is the protocol rule it enforces (B0101..
for B1, ..., B1001.. for B10); B00xx are the run dir's own (manifest, files, CSV format)."""
