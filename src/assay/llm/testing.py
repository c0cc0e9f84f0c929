"""Deprecated: moved to :mod:`assay.testing.llm` (this name works for one more release)."""

import warnings

from assay.testing.llm import FakeChatServer, main

__all__ = ["FakeChatServer", "main"]

warnings.warn(
    "assay.llm.testing moved to assay.testing.llm; the old name goes away in the next release",
    DeprecationWarning,
    stacklevel=2,
)

if __name__ == "__main__":
    main()
