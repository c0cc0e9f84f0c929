"""``python -m assay ...``: the same as the ``assay`` command."""

from assay.cli.main import main

if __name__ == "__main__":
    main()
