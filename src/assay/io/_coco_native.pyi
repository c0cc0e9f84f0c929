def scan_results(
    data: bytes, /
) -> (
    tuple[int, bytes, bytes, bytes, bytes | None, bytes | None, bytes | None, bytes | None]
    | None
): ...
def counts_area(data: bytes, ends: bytes, hw: bytes, /) -> bytes | None: ...
