"""What every tokenizer kind shares (`tokenizer_bow`, `tokenizer_hf`): the vocabulary limits
its file is checked against, and the error applying it raises. The registry of kinds, their
protocol and the file-size limit are `tokenizers`'; this module imports none of them, so a
kind's module and the registry never import each other.

The kinds read the limits as attributes of this module when a file is loaded, so a test
that lowers one (`monkeypatch.setattr(tokenizer_base, "MAX_VOCAB", ...)`) lowers it for
every kind.
"""

from __future__ import annotations

MAX_VOCAB = 2_000_000
"""The most vocabulary entries a tokenizer may hold."""
MAX_ENTRY_CHARS = 256
"""The longest vocabulary entry, in characters."""


class TokenizerFailed(Exception):
    """The tokenizer, built from its file, cannot apply itself to a text (the library's own
    error, such as a WordPiece vocabulary without its unknown token meeting an unknown word):
    the run's tokenizer is at fault, not the replay."""
