"""Issue 16, "search ranks by relevance (BM25 or better over name, description and parameter
names)": the BM25F of ``compozy_mcp.ranking``, checked against the formula by hand."""

from __future__ import annotations

import math

import pytest

from compozy_mcp.ranking import Bm25fIndex, FieldWeight, stem, terms


@pytest.mark.parametrize(
    ("word", "stemmed"),
    [
        ("sessions", "session"),
        ("session", "session"),
        ("archived", "archiv"),
        ("archive", "archiv"),
        ("archives", "archiv"),
        ("listing", "list"),
        ("lists", "list"),
        ("policies", "policy"),
        ("stopped", "stop"),
        ("running", "run"),
        ("status", "status"),
        ("read", "read"),
    ],
)
def test_the_stemmer_folds_the_forms_of_a_word_together(word: str, stemmed: str) -> None:
    assert stem(word) == stemmed


def test_terms_split_identifiers_and_drop_stop_words() -> None:
    assert terms("compozy__session_status") == ["compozy", "session", "status"]
    assert terms("createIssue for the HTTPServer") == ["creat", "issu", "http", "server"]
    assert terms("Show me the sessions") == ["show", "session"]


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def test_a_one_field_index_is_exactly_okapi_bm25() -> None:
    docs = [{"text": "apple apple banana"}, {"text": "banana cherry"}, {"text": "cherry"}]
    index = Bm25fIndex(docs, {"text": FieldWeight(1.0, 0.75)}, k1=1.2)
    average = (3 + 2 + 1) / 3

    def bm25(tf: int, length: int, df: int) -> float:
        norm = 1 - 0.75 + 0.75 * length / average
        t = tf / norm
        return _idf(3, df) * t * 2.2 / (1.2 + t)

    scores = index.scores("apple banana")
    assert scores[0] == pytest.approx(bm25(2, 3, 1) + bm25(1, 3, 2))
    assert scores[1] == pytest.approx(bm25(1, 2, 2))
    assert 2 not in scores  # matches no term


def test_fields_are_weighted_and_normalized_each_on_its_own() -> None:
    docs = [
        {"name": "stop", "description": "end the session now"},
        {"name": "status", "description": "read the session and stop nothing"},
    ]
    fields = {"name": FieldWeight(3.0, 0.0), "description": FieldWeight(1.0, 0.0)}
    index = Bm25fIndex(docs, fields, k1=1.2)
    scores = index.scores("stop")
    # b = 0: no length normalization; "stop" is in both documents (df 2)
    in_name, in_description = 3.0, 1.0
    assert scores[0] == pytest.approx(_idf(2, 2) * in_name * 2.2 / (1.2 + in_name))
    assert scores[1] == pytest.approx(_idf(2, 2) * in_description * 2.2 / (1.2 + in_description))
    assert scores[0] > scores[1]


def test_a_rare_term_weighs_more_than_a_common_one() -> None:
    docs = [{"t": "session list"}, {"t": "session status"}, {"t": "session stop"}]
    index = Bm25fIndex(docs, {"t": FieldWeight(1.0, 0.75)})
    scores = index.scores("session status")
    assert max(scores, key=scores.__getitem__) == 1
    assert index.scores("") == {}
    assert index.scores("zebra") == {}
