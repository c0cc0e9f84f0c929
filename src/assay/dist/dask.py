"""Run any evaluator over a Dask DataFrame or bag: the same records, a bigger engine.

The graph is the reduction of :mod:`assay.dist.reduce`: one task per partition adds it to a
fresh evaluator on a worker and returns the evaluator's ``state()``; neighbouring states
are merged ``split_every`` at a time on the workers; only the last state travels to the
caller, which merges it into the evaluator it was given and can then ``compute()``.

What travels between processes is each evaluator's state (plain numpy arrays), so its
size is the evaluator's state size (``docs/dist.md`` lists it per evaluator), never the
partitions themselves.

Example:
    >>> import dask.dataframe as dd, pandas as pd
    >>> from assay.scoring import ScoringEvaluator
    >>> df = pd.DataFrame({"h": [1, 2, 3, 4] * 5, "m": [1.0, 2.5, 3.0, 3.5] * 5})
    >>> ddf = dd.from_pandas(df, npartitions=4)
    >>> ev = evaluate_dask(ScoringEvaluator(human="h", system="m"), ddf, scheduler="sync")
    >>> one = ScoringEvaluator(human="h", system="m").add(df)
    >>> ev.compute().to_json() == one.compute().to_json()
    True
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from assay.dist.reduce import (
    AddFn,
    State,
    Template,
    finish,
    leaf_state,
    merge_states,
    tree_reduce,
)
from assay.errors import AssayError, ClusterError, InvalidInputError
from assay.evaluator import Evaluator

__all__ = ["evaluate_dask", "connect", "compute", "check_address", "Address", "DEFAULT_TIMEOUT"]

E = TypeVar("E", bound=Evaluator)
#: Seconds to reach a scheduler (connection and handshake), and to wait for a worker.
DEFAULT_TIMEOUT = 30.0


def _partitions(data: Any) -> list[Any]:
    """The delayed partitions of a Dask DataFrame, Series, bag or array, in order."""
    to_delayed = getattr(data, "to_delayed", None)
    if to_delayed is None:
        raise InvalidInputError(
            f"expected a Dask DataFrame or bag, got {type(data).__name__}", source="data"
        )
    parts = to_delayed()
    if hasattr(parts, "ravel"):  # a Dask array gives an array of blocks
        parts = list(parts.ravel())
    return list(parts)


def evaluate_dask(
    evaluator: E,
    data: Any,
    *,
    add: AddFn | None = None,
    split_every: int = 8,
    scheduler: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> E:
    """Fold every partition of ``data`` into ``evaluator`` (in place) and return it.

    Args:
        evaluator: any :class:`~assay.evaluator.Evaluator`; it serves as the template
            (class and configuration) of the workers' evaluators and receives the result.
        data: a Dask DataFrame (or Series, or bag); each partition is one batch.
        add: ``add(ev, partition)`` adds one partition (default ``ev.add(partition)``),
            e.g. ``lambda ev, df: ev.add_arrays(df.y, df.score, labels=[0, 1])``. It runs on
            the workers, so it must pickle (module-level functions and lambdas do).
        split_every: how many states one merge task combines (the tree's fan-in).
        scheduler: as ``dask.compute``'s: ``None`` (the active ``Client``, else Dask's
            default), ``"sync"``, ``"threads"``, ``"processes"``, a ``Client``, or a
            scheduler address ``"tcp://host:port"`` (connected for this call).
        timeout: with an address, seconds allowed for the connection and the handshake,
            for the first worker to join, and without any worker mid-run.

    Returns:
        ``evaluator``, holding the data of every partition, in partition order.
    """
    import dask

    template = Template.of(evaluator)
    leaves = [dask.delayed(leaf_state)(template, p, add) for p in _partitions(data)]
    root = tree_reduce(
        leaves, lambda group: dask.delayed(merge_states)(template, group), split_every
    )
    state = compute(root, scheduler, timeout=timeout)
    return finish(evaluator, _as_state(state))


def _as_state(state: Any) -> State | None:
    return None if state is None else dict(state)


class Address(str):
    """A scheduler address with the seconds allowed to reach it (``--scheduler-timeout``):
    a string everywhere an address is expected, its :attr:`timeout` read by :func:`connect`.

    Example:
        >>> a = Address("tcp://127.0.0.1:8786", timeout=3)
        >>> a, a.timeout
        ('tcp://127.0.0.1:8786', 3.0)
    """

    timeout: float

    def __new__(cls, address: str, *, timeout: float = DEFAULT_TIMEOUT) -> Address:
        obj = super().__new__(cls, address)
        obj.timeout = float(timeout)
        return obj


def check_address(address: str) -> None:
    """Refuse, before any connection, an address that is not ``tcp://HOST:PORT``.

    Only plain TCP is spoken: ``tls://`` needs certificates assay does not configure,
    ``ucx://`` and ``inproc://`` cannot be reached from another process, anything else is
    not Dask's.

    Example:
        >>> check_address("tcp://[::1]:8786")
        >>> check_address("tcp://127.0.0.1:port")
        Traceback (most recent call last):
        ...
        assay.errors.InvalidInputError: --scheduler: the port must be a number from 1 to 65535, got 'port'...
    """
    scheme, _, rest = address.partition("://")
    example = "expected tcp://HOST:PORT, e.g. tcp://127.0.0.1:8786"
    if scheme.lower() != "tcp":
        why = {
            "tls": "tls:// needs certificates, which assay does not configure",
            "ucx": "ucx:// needs UCX on both ends",
            "inproc": "inproc:// is only reachable from inside the scheduler's process",
        }.get(scheme.lower(), f"{scheme}:// is not a Dask scheduler protocol")
        raise InvalidInputError(f"{why}; {example}", source="--scheduler")
    if rest.startswith("["):
        host, bracket, port = rest[1:].partition("]")
        if not bracket or not port.startswith(":"):
            raise InvalidInputError(f"unclosed '[' or no port in {address!r}; {example}",
                                    source="--scheduler")  # fmt: skip
        port = port[1:]
    else:
        host, _, port = rest.rpartition(":")
    if not host or "/" in host:
        raise InvalidInputError(f"no host in {address!r}; {example}", source="--scheduler")
    if not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise InvalidInputError(
            f"the port must be a number from 1 to 65535, got {port!r}; {example}",
            source="--scheduler",
        )


@contextmanager
def connect(scheduler: Any, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[Any]:
    """A scheduler for ``dask.compute``: an address string connects a ``Client`` for the
    duration of the block (within ``timeout`` seconds for the connection, the handshake and
    the first worker); anything else passes through."""
    if not (isinstance(scheduler, str) and "://" in scheduler):
        yield scheduler
        return
    import dask

    timeout = getattr(scheduler, "timeout", timeout)

    check_address(scheduler)
    with dask.config.set(
        {"distributed.comm.timeouts.connect": f"{timeout}s", "distributed.comm.retry.count": 0}
    ):
        client = _client(scheduler, timeout)
        try:
            _wait_for_workers(client, scheduler, timeout)
            yield client
        finally:
            _close(client)


def _client(address: str, timeout: float) -> Any:
    """A ``Client`` of ``address``, or one line why not within ``timeout`` seconds (a port
    that never answers, an HTTP server, a scheduler of another protocol)."""
    from distributed import Client

    made: dict[str, Any] = {}

    def make() -> None:
        try:
            made["client"] = Client(address, timeout=timeout, set_as_default=False)
        except BaseException as e:  # handed to the caller below
            made["error"] = e

    thread = threading.Thread(target=make, name="assay-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout)  # Client's own limit overruns it against a port that never answers
    if "client" in made:
        return made["client"]
    why = f"no Dask handshake within {timeout:g} s (--scheduler-timeout)"
    if "error" in made and not isinstance(made["error"], (TimeoutError, asyncio.TimeoutError)):
        why = _first_line(made["error"])
    raise InvalidInputError(f"cannot connect to the Dask scheduler: {why}", source=address)


def _wait_for_workers(client: Any, address: str, timeout: float) -> None:
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, asyncio.TimeoutError):
        raise InvalidInputError(
            f"no worker joined the Dask scheduler within {timeout:g} s (--scheduler-timeout)",
            source=address,
        ) from None


def compute(root: Any, scheduler: Any, *, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """``dask.compute(root)`` on ``scheduler``; on a ``Client``, watched: a scheduler lost
    mid-run, or no worker left for ``timeout`` seconds, is a :class:`ClusterError` (the
    caller writes nothing); an error raised on a worker comes back as it was raised (an
    :class:`InvalidInputError` naming the file, row and field)."""
    import dask

    timeout = getattr(scheduler, "timeout", timeout)
    with connect(scheduler, timeout=timeout) as sched:
        if not _is_client(sched):
            (out,) = dask.compute(root, scheduler=sched)
            return out
        return _watched(sched, root, timeout)


def _is_client(obj: Any) -> bool:
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask without distributed
        return False
    return isinstance(obj, Client)


def _watched(client: Any, root: Any, timeout: float) -> Any:
    from distributed import TimeoutError as DaskTimeout

    where = str(client.scheduler.address)
    future = client.compute(root)
    alone_since: float | None = None
    while True:
        try:
            return future.result(timeout=0.5)
        except (DaskTimeout, TimeoutError, asyncio.TimeoutError):
            pass
        except AssayError:
            raise
        except Exception as e:
            if _is_cluster_fault(e):
                raise ClusterError(
                    f"lost the Dask scheduler mid-run ({_first_line(e)}); nothing was written",
                    source=where,
                ) from None
            raise
        try:
            workers = len(client.nthreads())
        except Exception as e:
            raise ClusterError(
                f"lost the Dask scheduler mid-run ({_first_line(e)}); nothing was written",
                source=where,
            ) from None
        now = time.monotonic()
        alone_since = None if workers else (alone_since or now)
        if alone_since is not None and now - alone_since > timeout:
            future.cancel()
            raise ClusterError(
                f"no Dask worker left for {timeout:g} s (--scheduler-timeout): the workers "
                "died or left mid-run; nothing was written",
                source=where,
            )


def _is_cluster_fault(e: BaseException) -> bool:
    """The cluster failed (a lost connection, cancelled work, workers killed), not the task."""
    from distributed.scheduler import KilledWorker

    return isinstance(e, (OSError, asyncio.CancelledError, KilledWorker)) or (
        type(e).__name__ in ("CancelledError", "FutureCancelledError", "CommClosedError")
    )


def _close(client: Any) -> None:
    try:
        client.close(timeout=5)
    except Exception:  # a scheduler already gone: nothing left to close
        pass


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
