"""Hesab məsələləri: modelin son yazdığı ədəd düzgün cavabla ədəd kimi müqayisə olunur.

grade(sample, item) bir nümunəni qiymətləndirir və 1.0 (düz) və ya 0.0 (səhv) qaytarır;
manifestdə metric_id: accuracy olduğu üçün bu dəyər accuracy metrikası kimi saxlanılır.
"""

import math


def _number(text):
    """Mətndəki "7,2", "7.2" və "−3" kimi yazılışları ədədə çevirir; alınmasa None qaytarır."""
    if text is None:
        return None
    cleaned = str(text).strip().replace("−", "-").replace(",", ".")
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def grade(sample, item):
    expected = _number(item["target"])
    if expected is None:
        raise ValueError(f"düzgün cavab ədəd deyil: {item['target']!r}")
    got = _number(sample["extracted_output"])
    if got is None:
        return 0.0
    return 1.0 if math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9) else 0.0
