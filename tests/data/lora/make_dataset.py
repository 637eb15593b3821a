"""Writes the small LoRA fine-tuning set in this directory (train/valid/test.jsonl, mlx-lm's
``{"text": ...}`` format). The text is made up for this project: short question/answer notes
about an imaginary town's market, built from fixed lists with a fixed order, so that the answer
pattern is learnable in a few dozen steps and the files are reproducible.

    python tests/data/lora/make_dataset.py
"""
import itertools
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

STALLS = [
    ("the baker", "rye loaves"), ("the potter", "blue jugs"), ("the weaver", "wool scarves"),
    ("the fishmonger", "smoked trout"), ("the beekeeper", "clover honey"), ("the cobbler", "leather boots"),
    ("the florist", "yellow tulips"), ("the smith", "iron hinges"), ("the cheesemaker", "goat cheese"),
    ("the chandler", "beeswax candles"), ("the glazier", "green bottles"), ("the miller", "oat flour"),
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
PRICES = ["two coins", "three coins", "five coins", "seven coins"]


def example(i, stall, day):
    who, what = stall
    price = PRICES[(i * 3 + len(day)) % len(PRICES)]
    return {"text": f"Q: What does {who} of Marrowby sell on {day}?\n"
                    f"A: On {day} {who} of Marrowby sells {what} for {price} each."}


def main():
    rows = [example(i, s, d) for i, (s, d) in enumerate(itertools.product(STALLS, DAYS))]
    # 84 rows: every sixth goes to valid, every sixth shifted by three to test, the rest train.
    splits = {"train": [], "valid": [], "test": []}
    for i, r in enumerate(rows):
        splits["valid" if i % 6 == 0 else "test" if i % 6 == 3 else "train"].append(r)
    for name, items in splits.items():
        with open(os.path.join(HERE, f"{name}.jsonl"), "w") as f:
            for r in items:
                f.write(json.dumps(r) + "\n")
        print(name, len(items))


if __name__ == "__main__":
    main()
