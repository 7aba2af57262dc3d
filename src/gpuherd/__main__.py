"""`python -m gpuherd` runs the CLI."""

from gpuherd.cli.main import main

main()
