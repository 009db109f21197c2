"""The embedder with the real packaged model: query vectors are cached, never recomputed;
long texts are embedded whole."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from nexusd.memory import embedder as embedder_module
from nexusd.memory.chunking import embed_text, embed_windows
from nexusd.memory.embedder import Embedder

pytestmark = pytest.mark.model


def test_query_vectors_come_from_the_cache_on_repeat(embedder: Embedder) -> None:
    # The model is shared by the whole session: queries no other test has asked.
    deploy, keys = f"why did deploy {uuid.uuid4().hex} fail", f"rotate key {uuid.uuid4().hex}"
    queries = [deploy, keys, deploy]
    before = embedder.encoded
    first = embedder.encode_queries(queries)
    # Two distinct queries, embedded once each, in one batch.
    assert embedder.encoded - before == 2
    assert first.shape == (3, embedder.dim)
    np.testing.assert_allclose(first[0], first[2])
    np.testing.assert_allclose(first[1], embedder.encode([keys])[0], atol=1e-5)

    before = embedder.encoded
    again = embedder.encode_queries([keys, deploy])
    assert embedder.encoded == before
    np.testing.assert_allclose(again, first[[1, 0]])


def test_the_query_cache_is_bounded(embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_module, "QUERY_CACHE_SIZE", 2)
    alpha, beta, gamma = (f"{word} {uuid.uuid4().hex}" for word in ("alpha", "beta", "gamma"))
    embedder.encode_queries([alpha, beta, gamma])
    assert len(embedder._queries) == 2
    before = embedder.encoded
    embedder.encode_queries([alpha])  # evicted first: embedded again
    assert embedder.encoded == before + 1


# One shared head longer than the model's 256-word-piece window, then different tails.
HEAD = " ".join(
    f"Section {i}: the garden beds were watered at dawn and the tomatoes staked." for i in range(30)
)
TAILS = {
    "db": "Lesson: the Postgres connection pool ran out under load; raise max_connections.",
    "ci": "Lesson: the CI runner lost its pip cache, so every build downloaded wheels again.",
}


def test_a_long_chunk_is_embedded_whole_not_only_its_first_window(embedder: Embedder) -> None:
    bodies = [f"{HEAD} {TAILS['db']}", f"{HEAD} {TAILS['ci']}"]
    cut = embedder.encode([embed_text("Notes", b) for b in bodies])
    assert np.allclose(cut[0], cut[1])  # the model alone never reads past the shared head
    before = embedder.encoded
    vecs = embedder.encode_windows([embed_windows("Notes", b) for b in bodies])
    assert embedder.encoded == before + 2  # chunks are counted, not windows
    assert vecs.shape == (2, embedder.dim)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    (db, ci) = embedder.encode(["database connections exhausted", "build cache lost on CI"])
    assert vecs[0] @ db > vecs[1] @ db
    assert vecs[1] @ ci > vecs[0] @ ci


def test_a_chunk_within_one_window_is_embedded_as_the_model_embeds_it(embedder: Embedder) -> None:
    text = embed_text("Lessons", TAILS["db"])
    assert embed_windows("Lessons", TAILS["db"]) == [text]
    assert np.allclose(embedder.encode_windows([[text]])[0], embedder.encode([text])[0])
