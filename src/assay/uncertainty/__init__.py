"""One uncertainty engine under every evaluator: intervals, clusters, slices and gaps.

An evaluator gives its per-unit tallies (:mod:`assay.uncertainty.tally`); the engine
(:mod:`assay.uncertainty.intervals`) attaches percentile, BCa, Wilson, t and DeLong
intervals, the cluster bootstrap and the gaps' intervals; :mod:`assay.uncertainty.slices`
annotates the records of each slice. Underneath: exact resample counts
(:mod:`~assay.uncertainty.resampling`), collapsing equal units
(:mod:`~assay.uncertainty.collapsing`), the cluster bootstrap
(:mod:`~assay.uncertainty.clusters`) and the closed forms
(:mod:`~assay.uncertainty.closed_form`).

A domain on the engine (classification, detection, segmentation and stats show the three
shapes: sums of cells, a kernel of its own, a mean):

1. ``tally.py`` in the domain builds its :class:`~assay.uncertainty.tally.Tally` objects:
   keys (the records' :func:`~assay.uncertainty.slices.record_key`), ``values(w)`` on a
   leading resample axis, the rows' multiplicities, each unit's row and id, its cluster
   codes, and closed forms or a jackknife where the domain has them; with a slice mask,
   ``inside``.
2. The evaluator exposes ``tally()`` (:class:`~assay.uncertainty.tally.Tallied`) and, with
   ``ci``, calls :func:`~assay.uncertainty.intervals.attach` on its records; with ``by``,
   :func:`~assay.uncertainty.slices.slice_records` with the evaluator run on the slice's
   units and :func:`~assay.uncertainty.intervals.gap_bounds` of the gap tallies
   (:meth:`~assay.uncertainty.tally.Tally.gap`, or the whole set's replicates made once).
3. A case in ``tests/contract/tally_cases_<domain>.py`` proves the tally against brute
   force (``tests/test_tally_contract.py``).
"""
