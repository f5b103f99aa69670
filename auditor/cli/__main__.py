"""`python -m auditor.cli ...`, as the docs show."""

from auditor.cli import main

main()
