"""The compiled COCO kernels (assay.io._coco_native), built when a C compiler is there.

The extension is optional: where it cannot be built, pip installs assay without it and the
pure-Python path gives the same results (see docs/detection.md, "The compiled reader").
Everything else about the package is in pyproject.toml.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "assay.io._coco_native",
            sources=["src/assay/io/_coco_native.c"],
            optional=True,
        )
    ]
)
