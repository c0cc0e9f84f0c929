"""The report's words: an introduction per kind and a caption per figure.

Each caption says what the figure shows, how to read it, what a good value looks like and
the caveat that matters, and names the domain's docs page. The texts are assay's own; the
figure modules pick theirs by key (:func:`caption`), the page renders them under the plot
(HTML-escaped like every other text). Docs pages are named, not linked: the report is one
file that links nowhere (its tests count live links).

Example:
    >>> c = caption("roc")
    >>> c.docs, bool(c.shows and c.read and c.good and c.caveat)
    ('docs/classification.md', True)
    >>> SECTIONS["detection"].docs
    'docs/detection.md'
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.report.html import esc

__all__ = ["Caption", "caption", "caption_html", "SECTIONS", "Section", "section", "PAIRED_TABLE"]


@dataclass(frozen=True)
class Caption:
    """What a figure shows, how to read it, what good looks like, the caveat, the docs page."""

    shows: str
    read: str
    good: str
    caveat: str
    docs: str


@dataclass(frozen=True)
class Section:
    """A kind's introduction: what its runs measure, and its docs page."""

    text: str
    docs: str


SECTIONS: dict[str, Section] = {
    "classification": Section(
        "Labels predicted from scores, compared with the true labels: curves over every "
        "score threshold, and the counts at the thresholds the run was asked for.",
        "docs/classification.md",
    ),
    "fairness": Section(
        "How a model's decisions differ between groups of people, as differences (fair at 0) "
        "and ratios (fair at 1) between a privileged group and the others.",
        "docs/fairness.md",
    ),
    "detection": Section(
        "Boxes found in images, matched to the true boxes by overlap (IoU), scored as COCO "
        "does: average precision per class and over IoU thresholds.",
        "docs/detection.md",
    ),
    "segmentation": Section(
        "Every pixel's predicted class against the true one: overlap per class and the pixel "
        "confusion matrix.",
        "docs/segmentation.md",
    ),
    "scoring": Section(
        "Automated scores against human scores, laid out as RSMTool's rsmeval report: "
        "agreement, distributions, and the same measures per subgroup.",
        "docs/scoring.md",
    ),
    "stats": Section(
        "Statistics over per-sample scores (as Inspect computes them): values per group with "
        "their uncertainty.",
        "docs/stats.md",
    ),
    "text": Section(
        "Generated text against references (ROUGE, BLEU) and an LLM judge's ratings, per "
        "datum; the judge's calls are the items at the end.",
        "docs/text.md",
    ),
    "pairwise": Section(
        "A judge model compares two answers to the same question; the verdicts give win rates "
        "and a Bradley-Terry rating per model.",
        "docs/pairwise.md",
    ),
    "llm_cat": Section(
        "Context association tests: the model picks between a stereotyped, an "
        "anti-stereotyped and an unrelated continuation.",
        "docs/suites.md",
    ),
    "llm_fairness": Section(
        "A model's yes/no decisions about people, compared between groups, and whether the "
        "answer changes when only the group is swapped.",
        "docs/suites.md",
    ),
    "llm_language": Section(
        "A multiple-choice exam per language: accuracy, accuracy on the answers that could be "
        "read, and how often the answer could not be read.",
        "docs/suites.md",
    ),
    "llm_fairness_average": Section(
        "The LLM fairness suite averaged over several datasets.", "docs/suites.md"
    ),
}

_GENERIC = Section(
    "Runs of a kind without plots of its own: their metrics and items are in the tables.",
    "docs/report.md",
)


def section(kind: str) -> Section:
    """The introduction of a kind (a generic one for kinds without their own)."""
    return SECTIONS.get(kind, _GENERIC)


_C = Caption
CAPTIONS: dict[str, Caption] = {
    "roc": _C(
        "The true positive rate against the false positive rate as the score threshold "
        "falls, one line per label (one versus the rest) and run.",
        "The closer a line bends to the top left corner, the better the scores separate that "
        "label from the others; the dotted diagonal is chance.",
        "An area under the curve (ROCAUC in the table) near 1; 0.5 is chance.",
        "A ROC curve hides class imbalance: with few positives, read the precision-recall "
        "curve too. Curves are thinned to 300 points; the store keeps them all.",
        "docs/classification.md",
    ),
    "pr": _C(
        "Precision against recall at each score threshold, one line per label and run (the "
        "hover names the threshold).",
        "Moving right finds more of the label; moving down, more of what is found is wrong.",
        "A line that stays high as recall grows; the area under it is the average precision.",
        "Precision depends on how common the label is: compare lines of one label across runs, "
        "not different labels.",
        "docs/classification.md",
    ),
    "confusion": _C(
        "How many datums of each true label (rows) got each predicted label (columns) at one "
        "score threshold; '(none)' counts datums with no score above it.",
        "The diagonal is right; every other cell is a mistake, its row says what it should "
        "have been.",
        "A dark diagonal and pale everything else.",
        "Counts, not rates: a large label dominates the colours. One matrix per run.",
        "docs/classification.md",
    ),
    "ap_per_class": _C(
        "Average precision per class, one bar per run, classes sorted by their mean over the "
        "runs; with many classes the best and the worst are shown first and the menu shows "
        "the rest.",
        "Longer is better; a class far below the others is where the detector fails. Thin "
        "lines are intervals, drawn only where the run computed one.",
        "AP@[.50:.95] above 0.5 is strong for COCO-style data; AP@.50 is always higher.",
        "A class with few true boxes has a noisy AP: check its count before trusting a gap.",
        "docs/detection.md",
    ),
    "pr_per_iou": _C(
        "Precision at COCO's 101 recall points (interpolated), averaged over classes, one "
        "colour per IoU threshold and one dash per run; IoU 0.5, 0.75 and 0.95 are drawn, the "
        "other thresholds wait in the legend (click a name to draw it).",
        "Stricter IoU (higher) lines sit lower: the gap between IoU 0.5 and 0.95 shows how "
        "tight the boxes are.",
        "Lines close together and high: boxes that are found are also well placed.",
        "Interpolated precision (the best precision at any higher recall), as COCO draws it.",
        "docs/detection.md",
    ),
    "pr_per_class": _C(
        "Precision against recall per class at IoU 0.5, one colour per class and one dash "
        "per run; with many classes the best and the worst are drawn, the others wait in the "
        "legend (click a name to draw it).",
        "Each line is one class: a line that drops early is a class the detector finds little of.",
        "Lines that stay high to the right.",
        "With many classes, compare a class across runs rather than classes with each other.",
        "docs/detection.md",
    ),
    "iou": _C(
        "Intersection over union per class: the pixels both the prediction and the truth "
        "call that class, over the pixels either calls it.",
        "1 is a perfect overlap, 0 none; classes are sorted by their mean over the runs.",
        "Above 0.7 is good for most scenes; thin structures score lower.",
        "IoU punishes small classes hard: a few pixels off is a large share of them.",
        "docs/segmentation.md",
    ),
    "pixel_confusion": _C(
        "How many pixels of each true class (rows) were predicted as each class (columns).",
        "The diagonal is right; a bright off-diagonal cell is two classes the model confuses.",
        "A dark diagonal.",
        "Pixel counts: large regions dominate.",
        "docs/segmentation.md",
    ),
    "fair_differences": _C(
        "Each difference between the unprivileged and the privileged group, per group "
        "definition (SPD: statistical parity, AOD: average odds, EOD: equal opportunity, DP "
        "and EO: demographic parity and equalized odds); the dashed line is fairness (0) and "
        "the shaded band the usual tolerance (plus or minus 0.1).",
        "A bar below 0 favours the privileged group, above 0 the other; outside the band is "
        "worth a look.",
        "Bars inside the band, with intervals that cross 0.",
        "The 0.1 band is a convention, not a law; small groups give wide intervals.",
        "docs/fairness.md",
    ),
    "fair_ratios": _C(
        "Each ratio of the unprivileged to the privileged group's rate (DI: disparate "
        "impact, DP and EO: demographic parity and equalized odds); the dashed line is "
        "fairness (1) and the band the four-fifths rule (0.8 to 1.25).",
        "Below 0.8 the unprivileged group gets the outcome much less often.",
        "Bars inside the band.",
        "A ratio of two small rates swings widely; read it with the rates by group.",
        "docs/fairness.md",
    ),
    "fair_rates": _C(
        "The rates behind the fairness measures, per group: how often each group is "
        "selected, and the true and false positive rates.",
        "Compare bars of one colour across groups: a gap here is what the differences and "
        "ratios summarise.",
        "Similar bars across groups.",
        "Equal selection rates can hide unequal error rates, and the other way round.",
        "docs/fairness.md",
    ),
    "counterfactual": _C(
        "How often the model's answer changed when only the group named in the prompt was "
        "swapped, overall and per group.",
        "Every change is a decision that depended on the group alone.",
        "0: no answer depends on the group.",
        "A small model may change answers at random; compare with a run that swaps a neutral word.",
        "docs/suites.md",
    ),
    "score_dist": _C(
        "The share of responses at each score level, for the human scores and the rounded "
        "system scores (rsmeval's score distribution).",
        "Bars of the two colours side by side: a system that avoids the extreme levels has "
        "shorter outer bars.",
        "The two distributions alike.",
        "Alike distributions do not mean the same responses got the same scores: read the "
        "confusion matrix.",
        "docs/scoring.md",
    ),
    "score_confusion": _C(
        "How many responses with each human score (rows) got each rounded system score (columns).",
        "The diagonal is exact agreement; cells next to it are off by one.",
        "Most counts on the diagonal and next to it.",
        "Counts: common levels dominate the colours.",
        "docs/scoring.md",
    ),
    "score_by_group": _C(
        "Agreement (QWK, Pearson r) and the standardised mean difference (DSM) per subgroup.",
        "Agreement bars should be alike across groups; DSM should be near 0.",
        "QWK above 0.7 and |DSM| below 0.1 in every group.",
        "Small groups give noisy values; RSMTool flags groups under 200 responses.",
        "docs/scoring.md",
    ),
    "stats_by_group": _C(
        "The value of a statistic per group, groups in their natural order, one colour per "
        "run (and reducer); thin lines are intervals where the run has them.",
        "Compare a group across runs, or the groups of one run.",
        "Depends on the statistic: for accuracy, higher.",
        "An interval from a standard error assumes independent samples.",
        "docs/stats.md",
    ),
    "text_hist": _C(
        "How a per-datum score is spread over the datums, runs overlaid.",
        "A heap on the right means most datums scored well; a second heap is a group of "
        "datums that failed.",
        "Most of the mass at the good end.",
        "The mean in the table can hide a split distribution: that is what this shows.",
        "docs/text.md",
    ),
    "cat": _C(
        "LMS (does the model prefer meaningful continuations), SS (how often it prefers the "
        "stereotype) and ICAT (both in one) per scope, 0 to 100.",
        "SS above 50 prefers stereotypes, below 50 anti-stereotypes; the dashed line is 50.",
        "LMS near 100, SS near 50, ICAT near 100.",
        "A small or scripted model is a demonstration, not a verdict on a real model.",
        "docs/suites.md",
    ),
    "exam": _C(
        "Per language: accuracy over all questions, accuracy over the answers that could be "
        "read, and the share of answers that could not.",
        "A high format-error rate lowers accuracy without saying the model knew less.",
        "High accuracy, format errors near 0.",
        "With few questions per language the intervals are wide.",
        "docs/suites.md",
    ),
    "win_rates": _C(
        "How often each model's answer was preferred over the opponent's, counted with ties, "
        "without ties and debiased for position; the dashed line is 0.5.",
        "Above 0.5 the model beats its opponent.",
        "Intervals wholly above 0.5.",
        "A small judge is a demonstration; its verdicts are not human preferences.",
        "docs/pairwise.md",
    ),
    "judge_consistency": _C(
        "How often the judge gave the same verdict when the answers were shown in both orders, "
        "and how often its verdict could be read at all.",
        "Low consistency means the position, not the answer, decided.",
        "Both near 1.",
        "A judge can be consistent and still wrong.",
        "docs/pairwise.md",
    ),
    "paired_forest": _C(
        "For each record both runs have, the difference between a run and the baseline on the "
        "units (datums, images, items) they share, with its interval; one row per record, one "
        "colour per run compared, the dashed line at 0 is no difference.",
        "A bar that does not cross the line is a difference the data support (filled marker); "
        "right of the line the run is higher than the baseline. Hover a marker for the test, "
        "the units paired and the adjusted p-value.",
        "For a score where higher is better, markers right of the line with bars clear of it; "
        "for an error rate, left of it.",
        "Paired on the shared units: a unit hard for both runs cancels, so these intervals "
        "are narrower than the two runs' own. Each row names its test (McNemar, DeLong, paired "
        "t or the paired bootstrap) in the table and the hover; a p-value is Holm-adjusted over "
        "the runs compared for that record, not over the records, so with many records some "
        "clear 0 by chance. With many records the plot keeps those furthest from 0; the "
        "tables keep all.",
        "docs/compare.md",
    ),
    "bt_ratings": _C(
        "Each model's Bradley-Terry rating from all the verdicts, with its bootstrap interval.",
        "A higher rating wins more often; models whose intervals overlap are not told apart.",
        "Intervals that do not overlap between the models you care about.",
        "Ratings are relative to the reference model, not absolute quality.",
        "docs/pairwise.md",
    ),
}


#: RSMTool's tables (by name, or by prefix for the per-group ones), in a sentence each.
SCORING_TABLES: dict[str, str] = {
    "eval_short": "The headline agreement of system and human scores in one row: means and "
    "deviations, weighted kappa, correlation, standardised mean difference, RMSE and R2, for "
    "the raw and the rounded system score. Good: kappa and correlation near the human-human "
    "values in 'consistency', |SMD| below 0.15.",
    "eval": "Every agreement measure of the system score (raw and rounded) against the first "
    "human score. Read exact and adjacent agreement as percentages.",
    "consistency": "How well the two humans agree where a second score exists: the ceiling "
    "the system is compared with.",
    "degradation": "System-human agreement minus human-human agreement: below 0 the system "
    "agrees with a human less than another human does. Good: close to 0.",
    "disattenuated_correlations": "The system-human correlation corrected for the humans' own "
    "disagreement: near 1 means the system measures what the humans measure.",
    "true_score_eval": "How well the system predicts the true score (what many humans would "
    "agree on), from the variance of the human scores (PRMSE). Good: PRMSE near 1.",
    "eval_by_": "The agreement measures per subgroup: a group whose values stand apart is "
    "scored differently by the system.",
    "consistency_by_": "Human-human agreement per subgroup.",
    "disattenuated_correlations_by_": "Disattenuated correlations per subgroup.",
    "fairness_metrics_by_": "RSMTool's fairness analysis: how much of the system's error is "
    "explained by group membership (overall score accuracy and difference, conditional "
    "score difference), with p-values. Good: small shares and large p-values.",
}


def scoring_table(name: str) -> str:
    """The sentence about one of RSMTool's tables (``""`` for a table without one)."""
    for key in sorted(SCORING_TABLES, key=len, reverse=True):
        if name == key or (key.endswith("_") and name.startswith(key)):
            return SCORING_TABLES[key] + " See docs/scoring.md."
    return ""


def caption(key: str) -> Caption:
    """The caption of a figure by its key (a ``KeyError`` names a key without one)."""
    return CAPTIONS[key]


def caption_html(key: str) -> str:
    """A figure's caption as the page shows it under the plot (escaped)."""
    c = caption(key)
    return (
        f"<figcaption><b>Shows</b> {esc(c.shows)} <b>Read</b> {esc(c.read)} "
        f"<b>Good</b> {esc(c.good)} <b>Caveat</b> {esc(c.caveat)} "
        f'<span class="docs">More: {esc(c.docs)}</span></figcaption>'
    )


#: The words over the paired tables (``{b}`` resamples, ``{s}`` the seed).
PAIRED_TABLE = (
    "The runs carry their units, so each record is compared on the units both runs share, as "
    "'assay compare' does: one table per run against the baseline (the first run), with the "
    "two values, the difference (run minus baseline) and its 95% interval, the test that "
    "gave the p-value (mcnemar for accuracy, delong for a ROC AUC, paired_t for a mean of "
    "per-unit scores, paired_bootstrap for the rest), the units paired, and the p-value "
    "Holm-adjusted over the runs compared for that record. Highlighted: a difference whose "
    "interval leaves out 0. Intervals and bootstrap p-values come from {b} paired resamples "
    "(seed {s}); 'assay compare' draws 1000 by default, so the ends can differ a little "
    "there. See docs/compare.md."
)
