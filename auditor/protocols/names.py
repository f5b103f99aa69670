"""The protocols' names as `manifest.json`'s `protocol` states them: one definition that
the registry, the protocol packages, replay and archive comparisons read (importing this
module imports nothing else)."""

PROTOCOL_A = "accepted-corpus-cost"
"""Protocol A: an accepted corpus before cost."""
PROTOCOL_B = "residency-energy"
"""Protocol B: energy and accelerator residency."""
LETTER = {PROTOCOL_A: "A", PROTOCOL_B: "B"}
"""How a table names a protocol in one letter."""
