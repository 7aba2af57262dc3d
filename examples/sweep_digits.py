"""A real sweep that needs no download and no GPU: scikit-learn's bundled digits dataset.

Each point trains a small classifier (logistic regression, or a one-hidden-layer MLP) on
1,347 8x8 images and scores it on the other 450; it writes `metrics.json` (val_acc,
train_time) into its run folder. About a second per point on a laptop core.

As the program a sweep file runs (see examples/sweep.yaml):

    gpuherd sweep examples/sweep.yaml --gpus 0
    gpuherd sweep status digits --sort -val_acc

As a Python sweep, with the function below as a task (run from the repository's root):

    python3 examples/sweep_digits.py --python-sweep

`train` is defined in this script's `__main__`: gpuherd's worker loads the script by its
path for each point without running the `if __name__ == "__main__":` block again.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import gpuherd


# A CPU model, but each point gets a GPU of its own (CUDA_VISIBLE_DEVICES), as a real one would.
@gpuherd.task(gpus=1)
def train(
    model: str, C: float = 1.0, hidden: int = 32, alpha: float = 1e-4, seed: int = 0
) -> dict[str, float]:
    """Train on digits; return the validation accuracy and the training time."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.25, random_state=seed)
    if model == "logreg":
        classifier = LogisticRegression(C=C, max_iter=500)
    elif model == "mlp":
        classifier = MLPClassifier(
            (hidden,), alpha=alpha, max_iter=200, early_stopping=True, random_state=seed
        )
    else:
        raise ValueError(f"unknown model {model!r}: use logreg or mlp")
    pipeline = make_pipeline(StandardScaler(), classifier)
    start = time.perf_counter()
    pipeline.fit(x_train, y_train)
    train_time = time.perf_counter() - start
    val_acc = float(pipeline.score(x_val, y_val))
    print(f"{model} C={C} hidden={hidden} alpha={alpha}: val_acc {val_acc:.4f}")
    return {"val_acc": round(val_acc, 4), "train_time": round(train_time, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["logreg", "mlp"], default="logreg")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--alpha", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=".", help="the run folder: metrics.json goes there")
    parser.add_argument(
        "--python-sweep", action="store_true", help="submit the MLP grid as a Python sweep"
    )
    args = parser.parse_args()
    if args.python_sweep:
        # One folder per point under results/digits-py/; a point done before is skipped.
        sweep = train.sweep(model=["mlp"], hidden=[16, 64], alpha=[1e-4, 0.1], name="digits-py")
        print(sweep)
        sweep.wait(timeout=600)
        for row in sweep.results(sort="-val_acc"):
            print(row["folder"], row["state"], row["metrics"])
        return
    metrics = train(args.model, args.C, args.hidden, args.alpha, args.seed)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump(metrics, f)


if __name__ == "__main__":
    main()
