"""``python -m fieldshift.cli``: the same as the ``fieldshift`` console script."""

from fieldshift.cli.command_tree import main

main()
