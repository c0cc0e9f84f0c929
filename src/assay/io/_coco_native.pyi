def scan_results(
    data: bytes, /
) -> (
    tuple[
        int,
        bytes,
        bytes,
        bytes,
        bytes | None,
        bytes | None,
        bytes | None,
        bytes | None,
        bytes | None,
    ]
    | None
): ...
def counts_area(data: bytes, ends: bytes, hw: bytes, /) -> bytes | None: ...
def rle_pair_iou(
    dt_rles: list[object],
    gt_rles: list[object],
    di: bytes,
    gi: bytes,
    group: bytes,
    crowd: bytes,
    /,
) -> bytes | None: ...
def rle_dicts(data: bytes, ends: object, sizes: list[object], /) -> list[dict[str, object]]: ...
