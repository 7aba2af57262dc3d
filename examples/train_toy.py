"""A tiny 'training run' that needs no GPU and no download: logistic regression on
synthetic data, in pure Python. It prints its loss per epoch, reports the GPU it was given,
and writes metrics.json into --out (or $GPUHERD_JOB_DIR)."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=os.environ.get("GPUHERD_JOB_DIR", "."))
    args = parser.parse_args()

    print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')} lr={args.lr}")
    rng = random.Random(args.seed)
    data = []
    for _ in range(400):
        x = [rng.gauss(0, 1), rng.gauss(0, 1)]
        data.append((x, 1.0 if x[0] + 0.5 * x[1] > 0 else 0.0))
    w, b = [0.0, 0.0], 0.0
    loss = 0.0
    for epoch in range(args.epochs):
        loss, gw, gb = 0.0, [0.0, 0.0], 0.0
        for x, y in data:
            p = 1 / (1 + math.exp(-(w[0] * x[0] + w[1] * x[1] + b)))
            loss -= y * math.log(p + 1e-12) + (1 - y) * math.log(1 - p + 1e-12)
            gw = [gw[0] + (p - y) * x[0], gw[1] + (p - y) * x[1]]
            gb += p - y
        n = len(data)
        w = [w[0] - args.lr * gw[0] / n, w[1] - args.lr * gw[1] / n]
        b -= args.lr * gb / n
        print(f"epoch {epoch + 1} loss {loss / n:.4f}", flush=True)
    accuracy = sum((w[0] * x[0] + w[1] * x[1] + b > 0) == (y == 1.0) for x, y in data) / len(data)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps({"loss": loss / len(data), "acc": accuracy}))
    print(f"accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
