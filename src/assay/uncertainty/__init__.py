"""One uncertainty engine under every evaluator: intervals, clusters, slices and gaps.

An evaluator gives its per-unit tallies (:mod:`assay.uncertainty.tally`); the engine
(:mod:`assay.uncertainty.intervals`) attaches percentile, BCa, Wilson, t and DeLong
intervals, the cluster bootstrap and the gaps' intervals; :mod:`assay.uncertainty.slices`
annotates the records of each slice. Underneath: exact resample counts
(:mod:`~assay.uncertainty.resampling`), collapsing equal units
(:mod:`~assay.uncertainty.collapsing`), the cluster bootstrap
(:mod:`~assay.uncertainty.clusters`) and the closed forms
(:mod:`~assay.uncertainty.closed_form`).
"""
