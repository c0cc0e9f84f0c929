"""Bootstrap resample counts: exact draws of ``Multinomial(n, m / n)`` over distinct units.

A bootstrap resample draws ``n`` units uniformly with replacement; summing the draws of units
with equal statistics gives counts over the distinct rows (multiplicities ``m``, ``n =
sum(m)``) distributed ``Multinomial(n, m / n)``. Three exact ways to draw them, chosen by
:func:`choose_scheme` (a function of ``m`` alone, so the seed fixes the draws; the first two
as before the third was added, which takes over only where it is cheaper):

``balls``
    ``n`` uniform draws over the units, counted (about 6 ns a draw): few units;
``multinomial``
    numpy's multinomial over the distinct rows (about 60 ns a row): few distinct rows
    standing for many units;
``poisson``
    independent ``Poisson(c m_c)`` counts, ``c = 1 - 3 / sqrt(n)``, then their sum ``S``
    fixed to ``n`` (about 1.5 ns a row): many distinct rows. Given ``S = s`` independent
    Poisson counts are ``Multinomial(s, m / n)`` whatever the common factor ``c``; adding
    ``n - s`` draws of probability ``m / n``, or removing ``s - n`` of the ``s`` draws
    chosen uniformly without replacement, leaves exactly ``Multinomial(n, m / n)``
    whatever ``s`` was. The factor puts ``S`` about three standard deviations below
    ``n``, so the cheap step (adding about ``3 sqrt(n)`` draws) is nearly always the one
    taken. A ``Poisson(c m_c)`` count is the sum of ``m_c // p`` draws of ``Poisson(p c)``
    and one of ``Poisson((m_c % p) c)``, each read by inversion from a ``b``-bit random
    number in a table of the ``2^b`` slots of [0, 1), ``p = 2^(16 - b) - 1``: the tables
    side by side make one 64 KiB array indexed by 16-bit numbers. ``b`` is 12, 11 or 10,
    whichever reads least for these multiplicities (fine slots for small ones, fewer
    further reads for large ones). The few slots that hold a jump of the distribution
    function (about 1 in 400 reads at 12 bits) are resolved by inverting ``(u + v) /
    2^b`` with a fresh double ``v``: the inversion of a uniform double, as numpy's own
    samplers.

Every scheme consumes its random streams resample after resample, so the counts depend on
``(m, num_bootstrap, seed)`` only, never on how many resamples are drawn at a time.

Example:
    >>> w = np.concatenate(list(resample_counts([70, 1, 2] * 200, 3, seed=0)))
    >>> w.shape, w.sum(axis=1).tolist(), choose_scheme(np.array([70, 1, 2] * 200))
    ((3, 600), [14600.0, 14600.0, 14600.0], 'poisson')
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.errors import InvalidInputError

__all__ = ["CHUNK_ELEMENTS", "SCHEMES", "choose_scheme", "poisson_table", "resample_counts"]

#: Numbers drawn at a time (a chunk of resamples of the distinct units), bounding memory;
#: small enough that a chunk's arrays stay in cache between the passes over them (at 10^6
#: datums 2^19 is a third faster than 2^22), large enough that many small resamples share
#: one chunk.
CHUNK_ELEMENTS = 1 << 19

SCHEMES = ("balls", "multinomial", "poisson")

F64 = NDArray[np.float64]
#: Random bits per table read, chosen per multiplicities (:func:`_choose_bits`); ``b`` bits
#: leave ``16 - b`` for the table, so multiplicities up to ``2^(16 - b) - 1`` are one read.
_BITS = (12, 11, 10)
_LOW = {b: np.uint64(((1 << b) - 1) * 0x0001_0001_0001_0001) for b in _BITS}
_AMBIGUOUS = 255
#: Table reads at a time: take() converts its 16-bit indices to a temporary of 8-byte
#: ones; kept at 256 KiB it is reused from the heap instead of mapped afresh (and faulted
#: in page by page) on every read, which made a 10^6-datum resample's reads vary 2x.
_PIECE = 1 << 15
_SPARE = 3.0  # the means are scaled down by _SPARE / sqrt(n): counts fall short of n
_LOOKUP = 1 << 23  # up to this many units, each unit's row is read from a table


def choose_scheme(multiplicity: NDArray[np.int64]) -> str:
    """The scheme for these multiplicities: ``balls`` when ``n <= 4 m`` and ``multinomial``
    otherwise, unless ``poisson`` is cheaper (a rough cost model, in ns)."""
    n, m = int(multiplicity.sum()), multiplicity.size
    first = "balls" if n <= 4 * m else "multinomial"
    cost = 6.0 * n if first == "balls" else 60.0 * m
    return "poisson" if 2.0 * (m + n // 31) + 30_000.0 < cost else first


@lru_cache(maxsize=256)
def poisson_table(mean: float, bits: int = 12) -> tuple[NDArray[np.uint8], F64]:
    """Inversion table of ``Poisson(mean)`` (``mean <= 63``) over ``S = 2^bits`` slots, and
    its CDF.

    Slot ``u`` covers ``[u, u + 1) / S``; its entry is the value ``#{k: F(k) <= x}``
    (the inversion) that every ``x`` in the slot gives, or 255 when a jump ``F(k)`` lies
    inside the slot. The CDF sums the probabilities (from ``lgamma``) in double precision
    and ends at exactly 1.

    Example:
        >>> table, cdf = poisson_table(1.0)
        >>> int(table[0]), int(table[2000]), int(table[4095]), round(float(cdf[0]), 4)
        (0, 1, 255, 0.3679)
    """
    slots = 1 << bits
    if mean == 0:
        return np.zeros(slots, dtype=np.uint8), np.ones(1)
    top = int(mean + 20 * math.sqrt(mean) + 40)
    logp = [k * math.log(mean) - mean - math.lgamma(k + 1) for k in range(top)]
    cdf = np.minimum(np.cumsum(np.exp(logp)), 1.0)
    cdf = np.append(cdf[cdf < 1.0], 1.0)
    scaled = cdf[:-1] * slots  # exact: a power of two
    count = np.zeros(slots + 1, dtype=np.int64)  # slot u's value: #{k: F(k) * S <= u}
    np.add.at(count, np.ceil(scaled).astype(np.int64), 1)
    table = np.cumsum(count)[:slots].astype(np.uint8)
    inside = scaled != np.floor(scaled)
    table[np.floor(scaled[inside]).astype(np.int64)] = _AMBIGUOUS
    return table, cdf


@dataclass(frozen=True)
class _Tables:
    """The tables of ``Poisson(scale v)`` for ``v = 0 .. 2^(16 - bits) - 1`` side by side
    (table ``v`` at ``v << bits``, so a read is ``table[v << bits | u]`` for ``bits`` random
    bits ``u``: one 64 KiB array), and per ambiguous slot (a row): the value at its left end
    and the jumps of the CDF inside it, as positions in the slot (``2^bits F(k) - u``, in
    (0, 1), exact), padded with inf."""

    bits: int
    table: NDArray[np.uint8]
    row: NDArray[np.intp]  # (65536,) each ambiguous slot's row
    start: NDArray[np.uint8]
    jumps: F64  # (rows, most jumps in a slot)

    @classmethod
    def of(cls, scale: float, bits: int) -> _Tables:
        size = 1 << bits
        parts = [poisson_table(scale * v, bits) for v in range(1 << (16 - bits))]
        table = np.concatenate([t for t, _ in parts])
        slots = np.flatnonzero(table == _AMBIGUOUS)
        row = np.zeros(table.size, dtype=np.intp)
        row[slots] = np.arange(slots.size)
        start, inner = [], []
        for s in slots.tolist():
            at = parts[s // size][1] * size - s % size  # the CDF, slot-relative
            start.append(np.count_nonzero(at <= 0.0))
            inner.append(at[(at > 0.0) & (at < 1.0)])
        jumps = np.full((slots.size, max([2] + [j.size for j in inner])), np.inf)
        for i, j in enumerate(inner):
            jumps[i, : j.size] = j
        return cls(bits, table, row, np.array(start, dtype=np.uint8), jumps)

    def resolve(self, slot: NDArray[np.intp], fine: F64) -> NDArray[np.uint8]:
        """The values of the reads of ambiguous ``slot`` s at ``(u + fine) / 2^bits``: the
        value at the slot's left end plus the jumps at or before ``fine`` (most slots hold
        one jump; the others are compared jump by jump)."""
        r = self.row[slot]
        out = self.start[r] + (self.jumps[r, 0] <= fine)
        many = np.flatnonzero(self.jumps[r, 1] < 1.0)
        if many.size:
            rm = r[many]
            out[many] = self.start[rm] + (self.jumps[rm] <= fine[many, None]).sum(axis=1)
        return out.astype(np.uint8)


def _parts(mult: NDArray[np.int64], part: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each row's multiplicity as table reads of at most ``part``: the first read of every
    row, then the further ones (full parts, then the rest); and the row of each further
    read. A row of multiplicity 0 reads ``Poisson(0)``."""
    full, rest = mult // part, mult % part
    first = np.where(full > 0, part, rest)
    more = np.maximum(full - 1, 0)
    tail = (full > 0) & (rest > 0)
    extra = np.repeat(np.arange(mult.size), more + tail)
    units = np.full(extra.size, part, dtype=np.int64)
    units[(np.cumsum(more + tail) - 1)[tail]] = rest[tail]
    return np.concatenate([first, units]), extra


def _choose_bits(mult: NDArray[np.int64]) -> int:
    """The table width with the least estimated cost (in ns): a read about 1, summing a
    further read into its row about 3, resolving an ambiguous read about 100, with about
    ``4 + 6 sqrt(v)`` ambiguous slots in the table of mean ``v`` (measured at 10^6 units:
    continuous scores' classes, mostly below 15, take 12 bits; rounded scores' tie groups,
    about 60 each, take 11)."""

    value, count = np.unique(mult, return_counts=True)

    def cost(bits: int) -> float:
        part = (1 << (16 - bits)) - 1
        full, rest = value // part, value % part
        reads = np.maximum(full + (rest > 0), 1)
        ambiguous = full * (4.0 + 6.0 * math.sqrt(part)) + (rest > 0) * (4.0 + 6.0 * np.sqrt(rest))
        return float(count @ (reads + 3.0 * (reads - 1) + 100.0 * ambiguous / (1 << bits)))

    return min(_BITS, key=cost)


@dataclass(frozen=True)
class _PoissonPlan:
    """The table reads of one resample: entry ``e < m`` reads row ``e``'s first part, the
    entries after ``m`` the further parts of rows above one table (row ``big[extra[e -
    m]]``)."""

    m: int
    n: int
    code: NDArray[np.uint64]  # (E / 4,) each entry's table ``v << bits``, 4 to a word
    tables: _Tables
    big: NDArray[np.intp]  # the rows with further parts (sorted)
    extra: NDArray[np.intp]  # (E - m,) the position in ``big`` of each further part
    unit_row: NDArray[np.integer[Any]] | None  # see ``rows_of``

    @classmethod
    def of(cls, mult: NDArray[np.int64]) -> _PoissonPlan:
        n = int(mult.sum())
        bits = _choose_bits(mult)
        units, extra = _parts(mult, (1 << (16 - bits)) - 1)
        words = -(-units.size // 4)  # each row its own 64-bit words; the padding reads table 0
        code = np.zeros(4 * words, dtype=np.uint16)
        code[: units.size] = units << bits
        tables = _Tables.of(1.0 - min(0.5, _SPARE / math.sqrt(n)), bits)
        if (mult == 1).all():
            unit_row = None
        elif n <= _LOOKUP:
            unit_row = np.repeat(np.arange(mult.size, dtype=np.int32), mult)
        else:
            unit_row = np.cumsum(mult)
        big = np.unique(extra).astype(np.intp)
        at = np.searchsorted(big, extra).astype(np.intp)
        return cls(mult.size, n, code.view(np.uint64), tables, big, at, unit_row)

    def draw(
        self, gen: np.random.Generator, fix: np.random.Generator, b: int
    ) -> tuple[F64, NDArray[np.integer[Any]]]:
        """``b`` rows of independent Poisson counts (not yet summing to ``n``), and their
        sums (of the 8-bit reads: half the time of a sum of the doubles)."""
        slot = gen.bit_generator.random_raw((b, self.code.size))
        slot &= _LOW[self.tables.bits]  # each 16-bit lane's low bits: a read's random number
        slot |= self.code  # ... and its table: four reads at once
        at = slot.view(np.uint16).reshape(-1)
        vals = np.empty((b, 4 * self.code.size), dtype=np.uint8)
        flat = vals.reshape(-1)
        for i in range(0, flat.size, _PIECE):  # small index temporaries (see _PIECE)
            # indices always in range: "wrap" skips numpy's bounds checks (twice as fast)
            self.tables.table.take(at[i : i + _PIECE], mode="wrap", out=flat[i : i + _PIECE])
        amb = np.flatnonzero(flat == _AMBIGUOUS)
        if amb.size:  # row-major order: the fix-up stream is consumed resample by resample
            flat[amb] = self.tables.resolve(at[amb].astype(np.intp), fix.random(amb.size))
        out = vals[:, : self.m].astype(np.float64)
        if self.extra.size:  # rows above one table: their further parts summed
            k = self.big.size
            idx = self.extra + k * np.arange(b)[:, None]
            further = vals[:, self.m : self.m + self.extra.size]
            sums = np.bincount(idx.ravel(), further.ravel(), minlength=b * k)
            out[:, self.big] += sums.reshape(b, k)
        wide = np.uint32 if self.n < 1 << 31 else np.int64  # sums near n: no overflow
        return out, vals.sum(axis=1, dtype=wide)

    def rows_of(self, units: NDArray[np.int64]) -> NDArray[np.integer[Any]]:
        """The row each of ``units`` (numbers ``0 .. n-1``, sorted) belongs to: read from
        a table of ``n`` entries, or (above 2^23 units) searched in the cumulative
        multiplicities (about 50 ns a unit at 10^6 units, against 1 for the table)."""
        if self.unit_row is None:
            return units
        if self.n <= _LOOKUP:
            return self.unit_row[units]
        return np.searchsorted(self.unit_row, units, "right")

    def fix_sum(self, rows: F64, sums: NDArray[np.integer[Any]], gen: np.random.Generator) -> None:
        """Bring every row's sum (``sums``) to ``n``, in place: add draws of probability ``m /
        n``, or remove draws chosen uniformly without replacement."""
        for row, total in zip(rows, sums.tolist()):
            s = int(total)
            if s < self.n:
                units = np.sort(gen.integers(0, self.n, self.n - s))  # sorted: a forward search
                cells = self.rows_of(units)
                np.add.at(row, cells, 1.0)
            elif s > self.n:
                gone = np.sort(gen.choice(s, s - self.n, replace=False, shuffle=False))
                np.subtract.at(row, _holding(row, gone), 1.0)


def _holding(row: F64, balls: NDArray[np.int64], block: int = 64) -> NDArray[np.intp]:
    """The entry of ``row`` (counts) holding each ball (``0 .. sum - 1``, counted left to
    right): ``searchsorted(cumsum(row), balls, "right")``, with the running sum taken over
    blocks of ``block`` entries and then inside the blocks the balls fall in only.

    Example:
        >>> _holding(np.array([2.0, 0.0, 1.0, 3.0]), np.array([0, 1, 2, 5]), block=2).tolist()
        [0, 0, 2, 3]
    """
    m = row.size
    whole = m // block * block
    sums = row[:whole].reshape(-1, block).sum(axis=1)
    if whole < m:
        sums = np.append(sums, row[whole:].sum())
    ends = np.cumsum(sums)
    blk = np.searchsorted(ends, balls, "right")
    touched, which = np.unique(blk, return_inverse=True)
    cols = touched[:, None] * block + np.arange(block)
    inside = cols < m
    local = np.cumsum(np.where(inside, row[np.minimum(cols, m - 1)], 0.0), axis=1)
    step = float(local[:, -1].max()) + 1.0
    offset = step * np.arange(touched.size)
    within = balls - (ends[blk] - sums[blk]) + offset[which]
    found = np.searchsorted((local + offset[:, None]).ravel(), within, "right")
    return (touched[found // block] * block + found % block).astype(np.intp)


def resample_counts(
    multiplicity: ArrayLike,
    num_bootstrap: int,
    seed: int,
    chunk_elements: int = CHUNK_ELEMENTS,
    scheme: str | None = None,
) -> Iterator[F64]:
    """Chunks of bootstrap resamples, each a (b, m) float array of counts over the distinct
    units (rows summing to ``n = sum(multiplicity)``).

    ``scheme``: ``balls``, ``multinomial`` or ``poisson`` (default: :func:`choose_scheme`);
    all three draw exactly ``Multinomial(n, m / n)``, each from its own stream. The stream
    depends only on ``(multiplicity, num_bootstrap, seed, scheme)``, not on the chunk size.

    Example:
        >>> w = np.concatenate(list(resample_counts([2, 1, 1], 5, seed=0, chunk_elements=6)))
        >>> w.shape, set(w.sum(axis=1).tolist())
        ((5, 3), {4.0})
    """
    m = np.asarray(multiplicity, dtype=np.int64)
    n = int(m.sum())
    if n == 0:
        raise InvalidInputError("no unit to resample", source="bootstrap")
    scheme = scheme or choose_scheme(m)
    if scheme not in SCHEMES:
        raise InvalidInputError(f"unknown scheme {scheme!r}", source="bootstrap")
    if scheme == "poisson":
        yield from _poisson_counts(m, num_bootstrap, seed, chunk_elements)
        return
    rng = np.random.default_rng(seed)
    direct = scheme == "balls"
    unit = None if not direct or (m == 1).all() else np.repeat(np.arange(m.size), m)
    width = n if direct else m.size
    per_chunk = max(1, chunk_elements // max(1, width))
    done = 0
    while done < num_bootstrap:
        b = min(per_chunk, num_bootstrap - done)
        if direct:
            draws = rng.integers(0, n, size=(b, n))
            if unit is not None:
                draws = unit[draws]
            draws += (np.arange(b) * m.size)[:, None]
            counts = np.bincount(draws.ravel(), minlength=b * m.size).reshape(b, m.size)
            yield counts.astype(np.float64)
        else:
            yield rng.multinomial(n, m / n, size=b).astype(np.float64)
        done += b


def _poisson_counts(
    m: NDArray[np.int64], num_bootstrap: int, seed: int, chunk_elements: int
) -> Iterator[F64]:
    plan = _PoissonPlan.of(m)
    gen, fix, balls = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    per_chunk = max(1, chunk_elements // (4 * plan.code.size))
    done = 0
    while done < num_bootstrap:
        b = min(per_chunk, num_bootstrap - done)
        rows, sums = plan.draw(gen, fix, b)
        plan.fix_sum(rows, sums, balls)
        yield rows
        done += b
