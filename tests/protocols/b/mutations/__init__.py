"""Protocol B's mutations: one module per rule, named after its code (`b0401.py` is B0401's),
read by tests/mutation_modules.py; `_helpers` holds the edits and specs several of them share."""
