"""SMD method names are case-insensitive (as RSMTool's ``method.lower()``)."""

import pytest

from assay.errors import InvalidInputError
from assay.scoring import standardized_mean_difference

H = [1.0, 2.0, 3.0, 4.0, 2.0]
M = [1.5, 2.0, 3.5, 3.5, 3.0]
POP = {"population_human_sd": 1.2, "population_system_sd": 0.8}


@pytest.mark.parametrize(
    ("given", "method"),
    [
        ("UNPOOLED", "unpooled"),
        ("Pooled", "pooled"),
        ("Johnson", "johnson"),
        ("WILLIAMSON", "williamson"),
    ],
)
def test_smd_method_names_are_case_insensitive(given, method):
    assert standardized_mean_difference(H, M, given, **POP) == standardized_mean_difference(
        H, M, method, **POP
    )


def test_unknown_smd_method_is_refused_naming_it():
    with pytest.raises(InvalidInputError, match="'cohen'"):
        standardized_mean_difference(H, M, "cohen")  # type: ignore[arg-type]
