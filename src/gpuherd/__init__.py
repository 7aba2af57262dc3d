"""gpuherd: a GPU job queue for machine-learning experiments."""

__version__ = "0.1.0"
