"""`python -m gpuherd` runs the CLI."""

from gpuherd.cli.entry import main

main()
