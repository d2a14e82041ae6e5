"""Relevance ranking for tool search: BM25F (Robertson & Zaragoza, "The Probabilistic Relevance
Framework: BM25 and Beyond", 2009), written out here because it is small and exact.

A document has fields (for a tool: its name, its description, its parameter names); each field
has a weight and its own length normalization ``b``. For a term ``t`` and a document ``d``::

    tf~(t, d) = sum over fields f of  w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
    idf(t)    = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(q, d) = sum over query terms t of  idf(t) * tf~ * (k1 + 1) / (k1 + tf~)

``tf~`` does not depend on the query, so it is computed once per (term, document) when the
index is built; a query then touches only the postings of its own terms.

Text becomes terms by :func:`terms`: identifiers are split (``session_status``,
``createIssue``), words are lower-cased, a few English stop words are dropped, and a light
suffix stemmer folds ``sessions``/``session``, ``archived``/``archive``, ``listing``/``list``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[A-Za-z0-9]+")
# createIssue -> create Issue; HTTPServer -> HTTP Server; v2Tools -> v2 Tools
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

_STOP = """a an and are as at be by can could do does for from how i in into is it its me my of
on or our please should so that the their them then there these this those to us was we what
when where which who will with would you your"""
STOP_WORDS = frozenset(_STOP.split())


def stem(word: str) -> str:
    """A light suffix stemmer: plurals, -ing, -ed, and a final -e (so that ``create``,
    ``created``, ``creates`` and ``creating`` meet)."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # stopped -> stop, running -> run
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The search terms of a text."""
    out: list[str] = []
    for token in _WORD.findall(text):
        for part in _CAMEL.sub(" ", token).split():
            word = part.lower()
            if word not in STOP_WORDS:
                out.append(stem(word))
    return out


@dataclass(frozen=True, slots=True)
class FieldWeight:
    weight: float
    #: length normalization: 0 ignores length, 1 normalizes fully
    b: float


class Bm25fIndex:
    """An immutable BM25F index over ``documents`` (each a mapping of field name to text)."""

    def __init__(
        self,
        documents: Sequence[Mapping[str, str]],
        fields: Mapping[str, FieldWeight],
        *,
        k1: float = 1.2,
    ) -> None:
        self.k1 = k1
        self.size = len(documents)
        tokenized = [{f: terms(doc.get(f, "")) for f in fields} for doc in documents]
        average = {
            f: (sum(len(doc[f]) for doc in tokenized) / self.size if self.size else 0.0) or 1.0
            for f in fields
        }
        self._postings: dict[str, dict[int, float]] = {}
        for index, doc in enumerate(tokenized):
            blended: dict[str, float] = {}
            for name, spec in fields.items():
                counts = Counter(doc[name])
                norm = 1 - spec.b + spec.b * len(doc[name]) / average[name]
                for term, count in counts.items():
                    blended[term] = blended.get(term, 0.0) + spec.weight * count / norm
            for term, tf in blended.items():
                self._postings.setdefault(term, {})[index] = tf
        self._idf = {
            term: math.log(1 + (self.size - len(docs) + 0.5) / (len(docs) + 0.5))
            for term, docs in self._postings.items()
        }

    def scores(self, query: str) -> dict[int, float]:
        """Each matching document's score for ``query`` (documents matching no term are
        absent)."""
        out: dict[int, float] = {}
        k1 = self.k1
        for term in terms(query):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = self._idf[term]
            for index, tf in postings.items():
                out[index] = out.get(index, 0.0) + idf * tf * (k1 + 1) / (k1 + tf)
        return out
