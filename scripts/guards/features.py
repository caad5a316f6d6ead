"""
Hashed word and character n-gram features, windowed. This is the specification the
TypeScript scorer (dataplane/src/pipeline/guardrails/learned/features.ts) implements: both
must give the same indices for the same text, and a parity test checks it on fixed texts.

  text      lower-cased (str.lower / String.prototype.toLowerCase)
  tokens    maximal runs of word code points: ASCII a-z 0-9, or any code point >= 128 that
            is not in SEPARATOR_RANGES (punctuation, symbols, emoji)
  features  per token: its word hash, the bigram with the previous token, and the 4-grams
            of \x02 token \x03 (only its first MAX_GRAM_CHARS code points, so a long
            base64 run costs no more than a word); index = 32-bit FNV-1a hash & (DIM - 1)
  windows   tokens [a, a + WINDOW) for a = 0, STRIDE, ...; the last one ends at the last
            token; a text shorter than WINDOW is one window. Scoring adds windows of
            SMALL_WINDOW tokens every SMALL_STRIDE the same way; a text's score is its best
            window's. A window's vector is its feature
            counts divided by sqrt(number of features), so length does not move the score.
"""

DIM_BITS = 18
DIM = 1 << DIM_BITS
WINDOW = 48
STRIDE = 16
SMALL_WINDOW = 16
SMALL_STRIDE = 8
MAX_GRAM_CHARS = 24
SEED_WORD = 1
SEED_GRAM = 2
FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193
MASK = 0xFFFFFFFF

SEPARATOR_RANGES = [
    (0x80, 0xBF),
    (0xD7, 0xD7),
    (0xF7, 0xF7),
    (0x2000, 0x2BFF),
    (0x3000, 0x303F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFF0F),
    (0xFF1A, 0xFF20),
    (0x1F000, 0x1FAFF),
]


def is_word(cp):
    if cp < 128:
        return 48 <= cp <= 57 or 97 <= cp <= 122
    for lo, hi in SEPARATOR_RANGES:
        if lo <= cp <= hi:
            return False
    return True


def tokens(text):
    out = []
    cur = []
    for ch in text.lower():
        cp = ord(ch)
        if is_word(cp):
            cur.append(cp)
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def fnv(seed, cps):
    h = FNV_OFFSET ^ seed
    for cp in cps:
        h ^= cp
        h = (h * FNV_PRIME) & MASK
    return h


def token_features(tok, prev_hash):
    """Feature indices of one token, and its word hash (for the next bigram)."""
    w = fnv(SEED_WORD, tok)
    feats = [w & (DIM - 1)]
    if prev_hash is not None:
        b = ((prev_hash ^ 0x9E3779B9) * FNV_PRIME) & MASK
        b = ((b ^ w) * FNV_PRIME) & MASK
        feats.append(b & (DIM - 1))
    padded = [2] + tok[:MAX_GRAM_CHARS] + [3]
    if len(padded) <= 4:
        feats.append(fnv(SEED_GRAM, padded) & (DIM - 1))
    else:
        for j in range(len(padded) - 3):
            feats.append(fnv(SEED_GRAM, padded[j : j + 4]) & (DIM - 1))
    return feats, w


def text_features(text):
    """Per token, its feature indices."""
    out = []
    prev = None
    for tok in tokens(text):
        feats, prev = token_features(tok, prev)
        out.append(feats)
    return out


def _spans(n_tokens, size, stride):
    if n_tokens <= size:
        return [(0, n_tokens)]
    spans = [(a, a + size) for a in range(0, n_tokens - size, stride)]
    spans.append((n_tokens - size, n_tokens))
    return spans


def windows(n_tokens, small=True):
    """Training windows are WINDOW long; scoring adds SMALL_WINDOW ones (when the text is
    longer than that), so a short attack at the end of a long message is not diluted."""
    spans = _spans(n_tokens, WINDOW, STRIDE)
    if small and n_tokens > SMALL_WINDOW:
        spans += _spans(n_tokens, SMALL_WINDOW, SMALL_STRIDE)
    return spans
