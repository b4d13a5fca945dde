"""``python -m fieldshift.cli``: the same as the ``fieldshift`` console script."""

from fieldshift.cli.app import main

main()
