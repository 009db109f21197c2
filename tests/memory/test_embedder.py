"""The embedder with the real packaged model: query vectors are cached, never recomputed."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from nexusd.memory import embedder as embedder_module
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
