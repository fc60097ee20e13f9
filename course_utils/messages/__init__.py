"""The course's message catalogue: what course_utils, the lab, the capstone CLI and the setup check say to a
learner, in English and in Chinese (中文).

A message is written in the code in English, as the catalogue key, and shown through :func:`t`::

    from course_utils.messages import t, lazy
    return t("lr={lr:g} diverges on this data: try a smaller one", lr=lr)

``t`` looks the English text up in the catalogue of the current language and fills in the named fields with
``str.format`` (only when fields are given, so a message without fields may hold braces). Text that is stored
before it is shown (hints, prediction options, widget labels built at import) is marked with :func:`lazy`
(which returns it unchanged) and translated by ``t`` where it is printed, so the language can change after
the module was imported.

The language: ``COURSE_LANG`` in the environment (``zh``, ``zh_CN``, ``zh-CN`` give Chinese; anything else,
or nothing, English), read at every message. The Chinese edition's first code cell sets it; ``make lab-zh``
sets it for the server and so for every kernel; ``COURSE_LANG=zh python -m capstone.train ...`` for the CLI.

The Chinese entries live in ``course_utils/messages/zh/<area>.json``, one file per source module
(``{"English text": "中文"}``). tests/test_messages.py fails on a ``t``/``lazy`` text without a Chinese
entry, on a Chinese entry whose fields differ from the English ones, and on an entry that no code uses.
A text missing from the catalogue is shown in English (a learner never sees an error for it).
"""

import json
import os
from functools import lru_cache
from pathlib import Path

CATALOGUE = Path(__file__).resolve().parent
LANGUAGES = ("en", "zh")


def language():
    """``"zh"`` when ``COURSE_LANG`` asks for Chinese, else ``"en"``."""
    value = os.environ.get("COURSE_LANG", "").strip().lower().replace("-", "_")
    return "zh" if value in ("zh", "zh_cn", "zh_hans", "cn") else "en"


@lru_cache(maxsize=None)
def catalogue(lang):
    """``{English text: translation}`` of one language (empty for English), from every file of its folder."""
    merged = {}
    if lang == "en":
        return merged
    for path in sorted((CATALOGUE / lang).glob("*.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        for english, translated in entries.items():
            if isinstance(translated, str) and translated:
                merged.setdefault(english, translated)
    return merged


def lazy(english):
    """Mark ``english`` for the catalogue without translating it yet (``t`` translates it where it is shown)."""
    return english


def t(english, /, **fields):
    """``english`` in the current language, with ``fields`` filled in (``str.format``) when any are given."""
    text = catalogue(language()).get(english, english) if language() != "en" else english
    if not fields:
        return text
    try:
        return text.format(**fields)
    except (KeyError, IndexError, ValueError):  # a broken translation must never hide the message
        return english.format(**fields)
