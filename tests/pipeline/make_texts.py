#!/usr/bin/python3
"""Small text data for the pipeline tests, written into the current folder: train.csv and test.csv
(text,label; a text's class is in its words: "good" rows are pos, "bad" rows neg; every third one
quoted as CSV wants it, commas and quotes inside), texts.csv (texts to predict) and corpus.txt
(a line repeated with its number, for language models). Deterministic (seed 1).

    python3 tests/pipeline/make_texts.py
"""
import random
random.seed(1)
words = "the a word of tiny model when it runs on two cores then".split()
def rows(n):
    out = []
    for i in range(n):
        label = random.choice(["pos", "neg"])
        key = "good" if label == "pos" else "bad"
        text = " ".join(random.choice(words) for _ in range(random.randint(2, 8)))
        text = text + " " + key + " " + random.choice(words)
        if i % 3 == 0:
            text = f'"{text}, ""quoted"""'
        out.append(f"{text},{label}")
    return out
open("train.csv", "w").write("text,label\n" + "\n".join(rows(160)) + "\n")
open("test.csv", "w").write("text,label\n" + "\n".join(rows(40)) + "\n")
open("texts.csv", "w").write('text\n"a good one, surely"\nthe bad word\n')
open("corpus.txt", "w").write("".join(f"line {i}: the good word runs on the tiny model, the bad word does not.\n" for i in range(300)))
