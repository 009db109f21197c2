"""The embedding model run by ONNX Runtime: the daemon embeds without importing torch.

A sentence-transformers model (a BERT, mean pooling, normalisation) is exported to an
ONNX graph once per model and export recipe, by `python -m nexusd.memory.onnx_encoder`
in a subprocess (the export needs torch; the process that embeds never imports it), into
the per-user cache (`$XDG_CACHE_HOME/nexusd/onnx/`, else `~/.cache/nexusd/onnx/`).
`OnnxEncoder` tokenizes with `tokenizers` as sentence-transformers does (truncation to
`max_seq_length` word pieces, padding per batch), runs the graph, mean-pools over the
attention mask and normalises: the vectors match sentence-transformers' within 1e-6.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nexusd.atomic import atomic_write_bytes, new_file

Vectors = npt.NDArray[np.float32]
# Bump when the exported graph changes (opset, inputs, attention): older files are ignored.
EXPORT_RECIPE = "bert-eager-opset17-v1"
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Tokens (rows × padded length) per graph run: without a bound the activations (and so the
# process's peak RSS) grow with the batch; 8 × 256 costs no throughput measured on 2 cores.
MAX_TOKENS_PER_RUN = 2048
# An export is seconds of work; anything past this is stuck.
EXPORT_TIMEOUT = 600.0
# Exported and torch vectors must agree this closely, or the graph is not written.
EXPORT_TOLERANCE = 1e-5
# Embedded by the export and at every load: a cached graph that gives other vectors than
# it did when it was checked against torch (a damaged file, another model's graph under
# the key) is exported again instead of silently embedding differently.
PROBE = ("a short probe", "a longer probe, with punctuation and ünïcödé " * 20, "")


def cache_dir() -> Path:
    """Where exported graphs live: `$XDG_CACHE_HOME/nexusd/onnx`, else `~/.cache/nexusd/onnx`."""
    base = Path(os.environ.get("XDG_CACHE_HOME", ""))
    # A relative value is ignored (the XDG spec says so): the daemon's working directory is
    # the repository, and a 90 MB graph does not belong in the working tree.
    if not base.is_absolute():
        base = Path.home() / ".cache"
    return base / "nexusd" / "onnx"


def model_key(model_dir: Path) -> str:
    """A hash of every file of the model and of the export recipe: a new model, a changed
    file or a new recipe gets a graph of its own."""
    digest = hashlib.sha256(EXPORT_RECIPE.encode())
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(model_dir)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:32]


def graph_path(model_dir: Path) -> Path:
    """The cached graph of `model_dir` (which may not exist yet)."""
    return cache_dir() / f"{model_key(model_dir)}.onnx"


def probe_path(graph: Path) -> Path:
    """Where the export keeps the vectors its graph gave for PROBE, checked at every load."""
    return graph.with_suffix(".probe.npy")


def _durable(path: Path, dest: Path) -> None:
    """Flush `path` to disk and rename it to `dest` (atomic: readers see one or the other)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    path.replace(dest)


def check_supported(model_dir: Path) -> None:
    """Raise ValueError unless the model is a transformer + mean pooling + normalisation,
    the only pipeline this encoder reproduces."""
    modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    if kinds != ["Transformer", "Pooling", "Normalize"]:
        raise ValueError(f"unsupported sentence-transformers modules {kinds}")
    pooling = json.loads((model_dir / modules[1]["path"] / "config.json").read_text("utf-8"))
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
    if modes != ["pooling_mode_mean_tokens"]:
        raise ValueError(f"unsupported pooling {modes}")


def export(model_dir: Path, dest: Path) -> None:
    """Export `model_dir` to an ONNX graph at `dest`, checked against torch, atomically
    (this imports torch: run it in a subprocess, see `ensure_graph`)."""
    import torch
    from transformers import AutoModel

    check_supported(model_dir)
    # Eager attention traces to plain ops with the padding mask applied; the mask's shortcut
    # for an all-ones mask is avoided by tracing with a padded row.
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            out = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types)
            return out.last_hidden_state

    ids = torch.full((2, 8), 1000, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = new_file(dest.parent, f".{dest.name}.", ".tmp")
    os.close(fd)
    try:
        with torch.no_grad():
            torch.onnx.export(
                Hidden(),
                (ids, mask, torch.zeros_like(ids)),
                tmp,
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*INPUTS, "last_hidden_state"]},
                opset_version=OPSET,
                dynamo=False,
            )
        from sentence_transformers import SentenceTransformer

        want = SentenceTransformer(str(model_dir), device="cpu").encode(
            list(PROBE), normalize_embeddings=True, convert_to_numpy=True
        )
        got = OnnxEncoder(model_dir, tmp).encode(PROBE)
        if float(np.abs(got - want).max()) > EXPORT_TOLERANCE:
            raise RuntimeError(f"exported graph differs from torch by {np.abs(got - want).max()}")
        record = io.BytesIO()
        np.save(record, got)
        atomic_write_bytes(probe_path(dest), record.getvalue())
        _durable(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def check_probe(encoder: OnnxEncoder, graph: Path) -> None:
    """Raise ValueError unless `encoder` embeds PROBE as the export recorded beside `graph`."""
    try:
        want = np.load(probe_path(graph))
    except (OSError, ValueError) as exc:
        raise ValueError(f"no usable probe vectors beside {graph.name} ({exc})") from exc
    got = encoder.encode(PROBE)
    if want.shape != got.shape or float(np.abs(got - want).max()) > EXPORT_TOLERANCE:
        raise ValueError(f"{graph.name} no longer embeds as it did when exported")


def ensure_graph(model_dir: Path, *, fresh: bool = False) -> Path:
    """The cached graph of `model_dir`, exported first in a subprocess when missing (or
    when `fresh`); raises RuntimeError when the export fails."""
    dest = graph_path(model_dir)
    if dest.is_file() and not fresh:
        return dest
    # Fails at once when the cache is unusable (a file in its way, no permission), before
    # seconds of export in the subprocess.
    dest.parent.mkdir(parents=True, exist_ok=True)
    # -P and the cache as working directory: `-m` would otherwise put the daemon's working
    # directory, the user's repository, first on the import path, and a `numpy.py` there
    # would run inside the export.
    cmd = [sys.executable, "-P", "-m", "nexusd.memory.onnx_encoder", str(model_dir), str(dest)]
    proc = subprocess.run(
        cmd,
        cwd=dest.parent,
        check=False,
        capture_output=True,
        text=True,
        timeout=EXPORT_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0 or not dest.is_file():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"ONNX export failed (exit {proc.returncode}): {tail}")
    return dest


def _threads() -> int:
    """Threads per graph run: OMP_NUM_THREADS as torch reads it (the daemon sets 1), else
    ONNX Runtime's default (0: one per core)."""
    try:
        return max(0, int(os.environ.get("OMP_NUM_THREADS", "0")))
    except ValueError:
        return 0


class OnnxEncoder:
    """One exported sentence-transformers model: tokenizer, graph, mean pooling, norm."""

    def __init__(self, model_dir: Path, graph: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        check_supported(model_dir)
        config = json.loads((model_dir / "sentence_bert_config.json").read_text("utf-8"))
        self.max_length = int(config.get("max_seq_length") or 512)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # Truncate as sentence-transformers does; pad per run below, not per call.
        self.tokenizer.enable_truncation(self.max_length)
        self.tokenizer.no_padding()
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0
        options = ort.SessionOptions()
        options.intra_op_num_threads = _threads()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # The arena keeps the largest batch's activations for good (+640 MB after one
        # 32 × 256 batch) and memory patterns only help fixed shapes: both off.
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        # Idle worker threads would spin on a core the daemon's other work needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> Vectors:
        """Unit-length float32 embeddings of `texts`, in order."""
        encodings = self.tokenizer.encode_batch(list(texts))
        # Longest first, as sentence-transformers batches: runs of similar length pad little.
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), 0), dtype=np.float32)
        start = 0
        while start < len(order):
            longest = len(encodings[order[start]].ids)
            rows = max(1, min(batch_size, MAX_TOKENS_PER_RUN // max(longest, 1)))
            run = order[start : start + rows]
            vecs = self._run([encodings[i].ids for i in run], longest)
            if out.shape[1] == 0:
                out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
            out[run] = vecs
            start += rows
        return out

    def _run(self, rows: list[list[int]], width: int) -> Vectors:
        ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        # Mean over real tokens, then unit length: sentence-transformers' Pooling + Normalize.
        means = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
        return np.asarray(means / norms, dtype=np.float32)


def main(argv: Sequence[str]) -> int:
    """`python -m nexusd.memory.onnx_encoder MODEL_DIR DEST`: export one graph."""
    if len(argv) != 2:
        print("usage: python -m nexusd.memory.onnx_encoder MODEL_DIR DEST", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    export(Path(argv[0]), Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
