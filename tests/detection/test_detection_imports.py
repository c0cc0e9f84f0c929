"""Detection reads and evaluates without importing pandas (its import costs ~100 MB of peak
memory, which the memory figures in docs/detection.md would carry)."""

import subprocess
import sys


def test_detection_evaluation_does_not_import_pandas():
    code = (
        "import sys\n"
        "from assay.detection import DetectionEvaluator\n"
        "from assay.testing.detection import make_coco\n"
        "from assay.detection.io import load_coco\n"
        "ev = DetectionEvaluator().add(load_coco(*make_coco(n_images=5, seed=0)))\n"
        "ev.compute(['mAP', 'AR', 'Counts', 'ConfusionMatrix'])\n"
        "ev.coco_summary()\n"
        "ev.filter(datums=[ev.data.uids[0]])\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_coco_mask_evaluation_does_not_import_shapely():
    """Mask IoUs are pycocotools'; shapely (a few MB, tens of ms) is for polygons and boxes
    against masks only."""
    code = (
        "import sys\n"
        "from assay.detection.compute import coco_evaluate\n"
        "from assay.testing.detection import make_coco\n"
        "from assay.detection.io import load_coco\n"
        "data = load_coco(*make_coco(n_images=5, segm=True, seed=0), iou_type='segm')\n"
        "stats = coco_evaluate(data).stats()\n"
        "print(stats[0] > 0, 'shapely' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"], out.stderr
