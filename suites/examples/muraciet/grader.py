"""Müraciətlərin təsnifatı: bütün cavablar üzrə makro-F1 və dəqiqlik.

grade_batch(samples, items) bütün nümunələri birlikdə alır. Etiketi tanınmayan cavab
(extracted_output None olanda) heç bir sinfə aid edilmir: o, öz sinfinin F1-ni azaldır.
"""


def grade_batch(samples, items):
    gold = [item["target"] for item in items]
    predicted = [sample["extracted_output"] for sample in samples]
    classes = sorted(set(gold) | {p for p in predicted if p is not None})
    f1_values = []
    for label in classes:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == label and p == label)
        fp = sum(1 for g, p in zip(gold, predicted, strict=True) if g != label and p == label)
        fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g == label and p != label)
        f1_values.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    correct = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p)
    return {
        "scores": {
            "macro_f1": sum(f1_values) / len(f1_values) if f1_values else 0.0,
            "accuracy": correct / len(gold) if gold else 0.0,
        }
    }
