"""fairlearn's side of the differential tests: its per-group metric functions and aggregates
under assay's record types (a named module, not conftest, so tests can import it)."""

from fairlearn.metrics import (
    demographic_parity_difference,
    demographic_parity_ratio,
    equalized_odds_difference,
    equalized_odds_ratio,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from sklearn.metrics import accuracy_score

TOL = 1e-12
RATES = {
    "SelectionRate": selection_rate,
    "TruePositiveRate": true_positive_rate,
    "FalsePositiveRate": false_positive_rate,
    "Accuracy": accuracy_score,
}
AGGREGATES = {
    "DemographicParityDifference": demographic_parity_difference,
    "DemographicParityRatio": demographic_parity_ratio,
    "EqualizedOddsDifference": equalized_odds_difference,
    "EqualizedOddsRatio": equalized_odds_ratio,
}
