"""The ``assay`` command line: every module whose job is the command line, and nothing else.

:mod:`assay.cli.main` is the entry point (the ``assay`` console script and ``python -m
assay``) and the lazy command table; each command is one module here (``classification``,
``runs``, ``llm`` ...) defining ``register(app)``; :mod:`assay.cli.support` and
:mod:`assay.cli.options` hold what the commands share (output, errors, the declared options).

This package is the top floor: it imports the domains, and no module outside it imports it.
Its ``__init__`` imports nothing, so ``import assay.cli.support`` loads no command.

Example:
    >>> import assay.cli.main
    >>> assay.cli.main.COMMANDS["runs"][0]
    'assay.cli.runs'
"""
