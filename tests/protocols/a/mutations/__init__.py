"""Protocol A's mutations: one module per rule, named after its code (`a0201.py` is A0201's),
read by tests/mutation_modules.py; `_helpers` holds the edits several of them share."""
