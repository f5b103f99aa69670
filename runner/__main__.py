"""`python -m runner ...`: the `runner` command, for an environment whose scripts are not on
PATH."""

from runner.cli import main

if __name__ == "__main__":
    main()
