"""`python -m auditor ...`: the `audit` command, for an environment whose scripts are not on
PATH."""

from auditor.cli import main

if __name__ == "__main__":
    main()
