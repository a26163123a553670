"""Müraciətlərin hazırlanması: boşluqlar sadələşdirilir, etiketlər kiçik hərflə yazılır.

Etiketlər Azərbaycan əlifbasının qaydası ilə kiçildilir (İ → i, I → ı): Pythonun öz
str.lower() funksiyası "KREDİT" sözünü "kredi̇t" (nöqtəli birləşən işarə ilə) edərdi.
Mətni boş olan müraciət atılır (None qaytarılır).
"""


def az_lower(text):
    return text.replace("İ", "i").replace("I", "ı").lower()


def transform_row(row):
    message = " ".join(row["mesaj"].split())
    if not message:
        return None
    return {"id": row["id"], "mesaj": message, "etiket": az_lower(row["etiket"].strip())}
