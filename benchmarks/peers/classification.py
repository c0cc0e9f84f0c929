"""The tools of the classification benchmark (``benchmarks/classification.py``): each a
function ``(y, s) -> None`` doing that tool's whole metric set on labels ``y`` and scores
``s`` (binary: the positive class's scores; multiclass: an ``(n, k)`` probability matrix),
named in :data:`TOOLS`. The driver times each in a fresh process.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

THRESHOLD = 0.5
CLASSES = 10


def assay_functional(y: np.ndarray, s: np.ndarray) -> None:
    from assay.classification import (
        accuracy_score,
        confusion_counts,
        f1_score,
        precision_score,
        recall_score,
        roc_auc_score,
    )

    if s.ndim == 1:
        roc_auc_score(y, s)
        pred = (s >= THRESHOLD).astype(np.int64)
        precision_score(y, pred)
        recall_score(y, pred)
        f1_score(y, pred)
    else:
        pred = s.argmax(axis=1)
        for j in range(s.shape[1]):
            roc_auc_score(y == j, s[:, j])
            precision_score(y, pred, zero_division=0.0, **{_label_kw(): j})
            recall_score(y, pred, zero_division=0.0, **{_label_kw(): j})
            f1_score(y, pred, zero_division=0.0, **{_label_kw(): j})
    accuracy_score(y, pred)
    confusion_counts(y, pred)


def _label_kw() -> str:
    import inspect

    from assay.classification import precision_score

    params = inspect.signature(precision_score).parameters
    return "positive_label" if "positive_label" in params else "pos_label"


def assay_evaluator(y: np.ndarray, s: np.ndarray) -> None:
    from assay.classification import ClassificationEvaluator

    metrics = ["Counts", "Precision", "Recall", "F1", "Accuracy", "ROCAUC"]
    k = 2 if s.ndim == 1 else s.shape[1]
    ClassificationEvaluator(score_thresholds=[0.0], metrics=metrics).add_arrays(
        y, s, labels=list(range(k))
    ).compute()


def sklearn_functional(y: np.ndarray, s: np.ndarray) -> None:
    from sklearn import metrics as skm

    if s.ndim == 1:
        skm.roc_auc_score(y, s)
        pred = (s >= THRESHOLD).astype(np.int64)
        # one call, as scikit-learn users get the three together (precision_score,
        # recall_score and f1_score separately would each redo the same counting)
        skm.precision_recall_fscore_support(y, pred, average="binary")
    else:
        skm.roc_auc_score(y, s, multi_class="ovr", average=None)
        pred = s.argmax(axis=1)
        skm.precision_recall_fscore_support(y, pred, average=None, zero_division=0.0)
    skm.accuracy_score(y, pred)
    skm.confusion_matrix(y, pred)


def torch_functional(y: np.ndarray, s: np.ndarray) -> None:
    import torch
    from torchmetrics.functional import classification as tmf

    t, p = torch.from_numpy(y), torch.from_numpy(s)
    if s.ndim == 1:
        for fn in (
            tmf.binary_auroc,
            tmf.binary_precision,
            tmf.binary_recall,
            tmf.binary_f1_score,
            tmf.binary_accuracy,
            tmf.binary_confusion_matrix,
        ):
            fn(p, t) if fn is tmf.binary_auroc else fn(p, t, threshold=THRESHOLD)
        return
    k = s.shape[1]
    tmf.multiclass_auroc(p, t, num_classes=k, average=None)
    for fn in (tmf.multiclass_precision, tmf.multiclass_recall, tmf.multiclass_f1_score):
        fn(p, t, num_classes=k, average=None)
    tmf.multiclass_accuracy(p, t, num_classes=k, average="micro")
    tmf.multiclass_confusion_matrix(p, t, num_classes=k)


def torch_stateful(y: np.ndarray, s: np.ndarray) -> None:
    import torch
    from torchmetrics import MetricCollection
    from torchmetrics import classification as tmc

    t, p = torch.from_numpy(y), torch.from_numpy(s)
    if s.ndim == 1:
        ms = MetricCollection(
            [
                tmc.BinaryAUROC(),
                tmc.BinaryPrecision(threshold=THRESHOLD),
                tmc.BinaryRecall(threshold=THRESHOLD),
                tmc.BinaryF1Score(threshold=THRESHOLD),
                tmc.BinaryAccuracy(threshold=THRESHOLD),
                tmc.BinaryConfusionMatrix(threshold=THRESHOLD),
            ],
            compute_groups=False,
        )
    else:
        k = s.shape[1]
        ms = MetricCollection(
            [
                tmc.MulticlassAUROC(num_classes=k, average=None),
                tmc.MulticlassPrecision(num_classes=k, average=None),
                tmc.MulticlassRecall(num_classes=k, average=None),
                tmc.MulticlassF1Score(num_classes=k, average=None),
                tmc.MulticlassAccuracy(num_classes=k, average="micro"),
                tmc.MulticlassConfusionMatrix(num_classes=k),
            ],
            compute_groups=False,
        )
    ms.update(p, t)
    ms.compute()


def valor_evaluator(y: np.ndarray, s: np.ndarray) -> None:
    from valor_lite.classification import Classification, Loader

    p = np.stack([1.0 - s, s], axis=1) if s.ndim == 1 else s
    labels = [str(j) for j in range(p.shape[1])]
    loader = Loader.in_memory()
    loader.add_data(
        [
            Classification(
                uid=str(i), groundtruth=labels[y[i]], predictions=labels, scores=p[i].tolist()
            )
            for i in range(len(y))
        ]
    )
    ev = loader.finalize()
    ev.compute_rocauc()
    ev.compute_precision_recall(score_thresholds=[0.0])


def assay_confusion(y: np.ndarray, s: np.ndarray, number_of_examples: int | None = None) -> None:
    from assay.classification import ClassificationEvaluator

    p = np.stack([1.0 - s, s], axis=1) if s.ndim == 1 else s
    ev = ClassificationEvaluator(
        score_thresholds=[0.5],
        metrics=["ConfusionMatrixWithExamples"],
        number_of_examples=number_of_examples,
    )
    ev.add_arrays(y, p, labels=list(range(p.shape[1]))).compute()


def valor_confusion(y: np.ndarray, s: np.ndarray) -> None:
    from valor_lite.classification import Classification, Loader

    p = np.stack([1.0 - s, s], axis=1) if s.ndim == 1 else s
    labels = [str(j) for j in range(p.shape[1])]
    loader = Loader.in_memory()
    rows = [
        Classification(
            uid=str(i), groundtruth=labels[y[i]], predictions=labels, scores=p[i].tolist()
        )
        for i in range(len(y))
    ]
    loader.add_data(rows)
    loader.finalize().compute_confusion_matrix_with_examples(score_thresholds=[0.5])


def argsort_floor(y: np.ndarray, s: np.ndarray) -> None:
    np.argsort(s if s.ndim == 1 else s[:, 0])


TOOLS: dict[str, Callable[[np.ndarray, np.ndarray], None]] = {
    "assay functional": assay_functional,
    "assay evaluator": assay_evaluator,
    "scikit-learn": sklearn_functional,
    "torchmetrics functional": torch_functional,
    "torchmetrics stateful": torch_stateful,
    "valor-lite evaluator": valor_evaluator,
    "np.argsort (floor)": argsort_floor,
    "assay ConfusionMatrixWithExamples": assay_confusion,
    "assay ConfusionMatrixWithExamples, 10 per cell": lambda y, s: assay_confusion(y, s, 10),
    "valor-lite ConfusionMatrixWithExamples": valor_confusion,
}
