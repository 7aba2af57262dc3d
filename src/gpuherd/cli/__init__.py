"""The command-line interface (click)."""
