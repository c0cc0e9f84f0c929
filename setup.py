"""The compiled COCO kernels (assay.io._coco_native), built when a C compiler is there.

The extension is optional: where it cannot be built, pip installs assay without it and the
pure-Python path gives the same results (see docs/detection.md, "The compiled reader").
Everything else about the package is in pyproject.toml.
"""

import sys

from setuptools import Extension, setup

# Polygons are rasterised with pycocotools' floating-point steps: no fused multiply-add may
# change their rounding (GCC and Clang contract a * b + c by default on some CPUs; MSVC does
# not unless asked).
FLAGS = [] if sys.platform == "win32" else ["-ffp-contract=off"]

setup(
    ext_modules=[
        Extension(
            "assay.io._coco_native",
            sources=["src/assay/io/_coco_native.c"],
            extra_compile_args=FLAGS,
            optional=True,
        )
    ]
)
