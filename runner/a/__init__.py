"""Protocol A (`runner execute`, `runner memory-probe`): an accepted corpus before cost."""
