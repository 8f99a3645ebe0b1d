"""``python -m scorer``: the same as the ``scorer`` console script."""

from .cli import run

if __name__ == "__main__":
    run()
