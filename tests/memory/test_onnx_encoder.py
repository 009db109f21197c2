"""The ONNX runtime of the embedding model, with the real packaged model: the same vectors
as sentence-transformers, an export made in a subprocess into the cache (and made again
when the cached file is corrupt), torch when ONNX cannot be used, and no torch in a
process that embeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nexusd.memory.embedder import RUNTIME_ENV, Embedder, resolve_model
from nexusd.memory.onnx_encoder import (
    MAX_TOKENS_PER_RUN,
    PROBE,
    OnnxEncoder,
    cache_dir,
    check_probe,
    graph_path,
    probe_path,
)

pytestmark = pytest.mark.model

MODEL = "all-MiniLM-L6-v2"
ROOT = Path(__file__).resolve().parents[2]

SHORT = ["why did the deploy fail", "rotate the signing key"]
LONG = [" ".join(f"Section {i}: the garden beds were watered at dawn." for i in range(80))]
UNICODE = [
    "Grüße aus Köln: naïve café",
    "日本語のテキストを埋め込む",
    "emoji 🎉🚀 and math ∑ x² ≤ ∞",
]
EMPTYISH = ["", " ", "\n\t", ".", "a"]


@pytest.fixture(scope="module")
def torch_model() -> object:
    """sentence-transformers itself, the reference the ONNX vectors must match."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_model(MODEL), device="cpu")


def reference(model: object, texts: list[str]) -> np.ndarray:
    out = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)  # type: ignore[attr-defined]
    return np.asarray(out, dtype=np.float32)


def test_the_session_model_runs_on_onnx(embedder: Embedder) -> None:
    assert embedder.runtime == "onnx", embedder.runtime_reason
    described = embedder.describe()
    assert described["runtime"] == "onnx"
    assert described["runtime_reason"]


@pytest.mark.parametrize(
    "texts",
    [SHORT, LONG, UNICODE, EMPTYISH, [*LONG, *SHORT, *EMPTYISH, *UNICODE, *LONG]],
    ids=["short", "long-truncated", "unicode", "empty-ish", "mixed-batch"],
)
def test_onnx_vectors_equal_sentence_transformers(
    embedder: Embedder, torch_model: object, texts: list[str]
) -> None:
    got = embedder.encode(texts)
    want = reference(torch_model, texts)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)


def test_a_batch_over_the_token_bound_is_split_and_still_exact(
    embedder: Embedder, torch_model: object
) -> None:
    # More 256-piece texts than one run may hold: several runs, each within the bound.
    texts = [f"{i} {LONG[0]}" for i in range(MAX_TOKENS_PER_RUN // 256 * 2 + 3)]
    tokens = embedder._model.tokenizer.encode(texts[0])
    assert len(tokens.ids) == 256  # truncated to max_seq_length, like sentence-transformers
    np.testing.assert_allclose(embedder.encode(texts), reference(torch_model, texts), atol=1e-5)


def test_the_export_landed_in_the_session_cache_without_leftovers(embedder: Embedder) -> None:
    assert embedder.runtime == "onnx"
    graph = graph_path(Path(resolve_model(MODEL)))
    assert graph.parent == cache_dir()
    assert str(graph).startswith(os.environ["XDG_CACHE_HOME"])
    assert graph.is_file()
    # The graph and its probe record, no temp files.
    assert sorted(p.name for p in graph.parent.iterdir()) == [graph.name, probe_path(graph).name]


def test_forcing_torch_embeds_on_sentence_transformers_with_the_same_vectors(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RUNTIME_ENV, "torch")
    emb = Embedder(MODEL)
    assert emb.load(), emb.error
    assert emb.runtime == "torch"
    assert emb.describe()["runtime_reason"] == f"{RUNTIME_ENV}=torch"
    texts = [*SHORT, *UNICODE]
    np.testing.assert_allclose(emb.encode(texts), embedder.encode(texts), atol=1e-5)


def test_an_unusable_cache_falls_back_to_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    emb = Embedder(MODEL)
    with caplog.at_level("WARNING", logger="nexusd.memory"):
        assert emb.load(), emb.error
    assert emb.runtime == "torch"
    assert "ONNX unavailable" in (emb.runtime_reason or "")
    assert any("sentence-transformers" in r.getMessage() for r in caplog.records)
    assert emb.encode(SHORT).shape == (2, emb.dim)


def test_an_unknown_runtime_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUNTIME_ENV, "tensorflow")
    emb = Embedder(MODEL)
    assert not emb.load()
    assert RUNTIME_ENV in (emb.error or "")


DAEMON_LIKE = """
import json, logging, sys
import nexusd.daemon.main  # everything the daemon imports at start
logging.getLogger("nexusd.memory").addHandler(logging.StreamHandler(sys.stderr))
from nexusd.memory.embedder import shared_embedder
emb = shared_embedder("all-MiniLM-L6-v2")
assert emb.load(), emb.error
vecs = emb.encode(["why did the deploy fail"])
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"runtime": emb.runtime, "heavy": heavy, "vector": vecs[0].tolist()}))
"""


def test_a_corrupt_cached_graph_is_exported_again_in_a_subprocess_and_torch_never_loads(
    embedder: Embedder, tmp_path: Path
) -> None:
    """Also: the export runs nothing from the repository the daemon works in (a `numpy.py`
    there ran inside the export when `-m` put the working directory on its import path)."""
    cache = tmp_path / "cache"
    repo = tmp_path / "repo"
    repo.mkdir()
    marker = tmp_path / "repository-code-ran"
    (repo / "numpy.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('not numpy')\n", encoding="utf-8"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    graph = cache / graph_path(Path(resolve_model(MODEL))).relative_to(os.environ["XDG_CACHE_HOME"])
    graph.parent.mkdir(parents=True)
    graph.write_bytes(b"not an onnx graph")
    proc = subprocess.run(
        [sys.executable, "-P", "-c", DAEMON_LIKE],  # -P: as the daemon runs
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # The export imported torch, but in its own process: this one embedded without it.
    assert out["runtime"] == "onnx"
    assert out["heavy"] == []
    assert "exporting it again" in proc.stderr
    assert graph.stat().st_size > 1_000_000
    assert sorted(p.name for p in graph.parent.iterdir()) == [
        graph.name,
        probe_path(graph).name,
    ]
    assert not marker.exists()
    want = embedder.encode(["why did the deploy fail"])[0]
    np.testing.assert_allclose(np.asarray(out["vector"]), want, atol=1e-5)


def test_a_graph_that_no_longer_embeds_as_exported_fails_its_probe(
    embedder: Embedder, tmp_path: Path
) -> None:
    """A graph that loads but embeds differently from its export's record (a damaged weight,
    another model's graph under the key) is caught at load; the embedder exports it again."""
    graph = graph_path(Path(resolve_model(MODEL)))
    encoder = OnnxEncoder(Path(resolve_model(MODEL)), graph)
    check_probe(encoder, graph)  # the session's own export passes
    copy = tmp_path / graph.name
    copy.write_bytes(graph.read_bytes())
    recorded = np.load(probe_path(graph))
    np.save(probe_path(copy), recorded[::-1])  # the record of other vectors
    with pytest.raises(ValueError, match="no longer embeds"):
        check_probe(encoder, copy)
    probe_path(copy).unlink()
    with pytest.raises(ValueError, match="no usable probe"):
        check_probe(encoder, copy)
    assert recorded.shape == (len(PROBE), embedder.dim)


def test_a_relative_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The XDG spec ignores a relative XDG_CACHE_HOME: the graph never lands in the
    daemon's working directory, the repository."""
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert cache_dir() == Path.home() / ".cache" / "nexusd" / "onnx"
