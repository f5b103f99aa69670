"""Protocol A's rules: one module per rule (`aNNNN_<name>.py`), each defining `RULE` with
`auditor.rule.rule`. `auditor.protocols.base.Protocol.rules` discovers them, so adding a rule
is adding one module (and one mutation in tests/protocols/a/)."""
