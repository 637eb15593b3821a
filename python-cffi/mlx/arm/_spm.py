"""A GGUF ``llama`` (SentencePiece BPE) vocabulary as a Hugging Face ``tokenizers`` object.

llama.cpp tokenizes these vocabularies by starting from the UTF-8 characters of the text (spaces
written as ``▁``, one ``▁`` put in front) and repeatedly joining the adjacent pair whose join is
a vocabulary piece of the highest score (leftmost on a tie); characters left without a piece
become their ``<0xXX>`` byte tokens. A BPE model whose merges are every (left, right) split of
every piece, ranked by the joined piece's score, applies the same joins in the same order, so
the two agree token for token (tests/python/test_convert.py, against llama.cpp's ids).
"""
import numpy as np

SPACE = "\u2581"
# llama.cpp's token types (gguf.TokenType): 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte.
_NORMAL, _UNKNOWN, _CONTROL, _USER, _BYTE = 1, 2, 3, 4, 6


def merges_by_score(tokens, scores, types):
    """Every (left, right) split of every normal piece whose halves are pieces, best join first."""
    ids = {t: i for i, t in enumerate(tokens)}
    ranked = []
    for i, (piece, ty) in enumerate(zip(tokens, types)):
        if int(ty) not in (_NORMAL, _USER) or len(piece) < 2:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in ids and right in ids:
                # A higher score joins first; equal scores: the lower id, then the shorter left half.
                ranked.append((-float(scores[i]), i, cut, left, right))
    ranked.sort()
    return [(left, right) for _, _, _, left, right in ranked]


def tokenizer(md):
    """The ``tokenizers.Tokenizer`` of a GGUF ``llama`` vocabulary and whether it adds BOS."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, processors

    tokens = list(md["tokenizer.ggml.tokens"])
    n = len(tokens)
    scores = np.asarray(md.get("tokenizer.ggml.scores", np.zeros(n, np.float32)))
    types = np.asarray(md.get("tokenizer.ggml.token_type", np.full(n, _NORMAL, np.int32)))
    if len(scores) != n or len(types) != n:
        raise ValueError("[convert] tokenizer.ggml.scores / token_type do not match the vocabulary")
    unk = md.get("tokenizer.ggml.unknown_token_id")
    bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges_by_score(tokens, scores, types),
                     unk_token=tokens[int(unk)] if unk is not None else None, byte_fallback=True,
                     fuse_unk=True)
    tok = Tokenizer(bpe)
    add_prefix = bool(md.get("tokenizer.ggml.add_space_prefix", True))
    steps = ([normalizers.Prepend(SPACE)] if add_prefix else []) + [normalizers.Replace(" ", SPACE)]
    tok.normalizer = normalizers.Sequence(steps)
    dec = [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if add_prefix:
        dec.append(decoders.Strip(" ", 1, 0))
    tok.decoder = decoders.Sequence(dec)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if int(ty) in (_CONTROL, _USER)])
    bos = md.get("tokenizer.ggml.bos_token_id")
    add_bos = bool(md.get("tokenizer.ggml.add_bos_token", True)) and bos is not None
    if add_bos:
        b = tokens[int(bos)]
        tok.post_processor = processors.TemplateProcessing(single=f"{b} $A", pair=f"{b} $A {b} $B",
                                                           special_tokens=[(b, int(bos))])
    return tok, add_bos
