"""Moved to :mod:`assay.uncertainty.clusters`; this name stays only for the fairness package
until it imports the engine (issue 29, the fairness fold), then goes."""

from assay.uncertainty.clusters import Clusters

__all__ = ["Clusters"]
