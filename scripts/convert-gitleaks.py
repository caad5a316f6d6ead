#!/usr/bin/env python3
"""
Converts gitleaks' default rule set (config/gitleaks.toml, MIT, Zachary Rice) into
dataplane/src/pipeline/guardrails/gitleaks-rules.json for the secrets guard, and writes one
sample secret per rule, generated from the rule's own regex with a fixed seed, to
test/data/guardrails/secrets/samples.jsonl (the per-rule test) and a second, differently
seeded sample to test/data/guardrails/secrets/test.jsonl (the evaluation's positives).
gitleaks' own generator test cases are NOT used (they are kept for independent evaluation).

  python3 scripts/convert-gitleaks.py --mirror /work/.mirror

Go's RE2 syntax becomes JavaScript's: Node 20 has no inline flag groups, so case-
insensitive stretches ((?i) and (?i:...), with (?-i:...) inside them) are spelled out as
letter classes ([aA]); (?s:.) becomes [\\s\\S]; \\z and \\A become $ and ^; [[:alnum:]]
becomes a-zA-Z0-9.
"""

import argparse
import json
import math
import os
import random
import re
import subprocess
import tomllib

try:
    import re._parser as sre_parse  # Python >= 3.11
    import re._constants as C
except ImportError:  # pragma: no cover
    import sre_parse
    import sre_constants as C

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = ("gitleaks+gitleaks", "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b", "config/gitleaks.toml")
# Rules left out, and why (recorded in the JSON too).
SKIP = {
    "generic-api-key": "any high-entropy value beside key/token/secret; the guard's own generic rule covers it with placeholder, identifier and documented-example checks",
    "pkcs12-file": "matches file paths, not text",
    "jwt": "the guard's own JWT rule also requires a header naming a real signing algorithm",
    "jwt-base64": "the guard's own JWT rule also requires a header naming a real signing algorithm",
}
POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "upper": "A-Z", "lower": "a-z", "xdigit": "0-9A-Fa-f", "space": " \\t\\r\\n\\f\\v", "punct": "!-/:-@\\[-`{-~"}


def swap_class_items(body):
    """Adds the other case of every letter and letter range of a class body."""
    extra = []
    for m in re.finditer(r"\\.|([a-zA-Z])-([a-zA-Z])|([a-zA-Z])", body):
        if m.group(1):
            a, b = m.group(1), m.group(2)
            if a.islower() and b.islower():
                extra.append(f"{a.upper()}-{b.upper()}")
            elif a.isupper() and b.isupper():
                extra.append(f"{a.lower()}-{b.lower()}")
        elif m.group(3):
            extra.append(m.group(3).swapcase())
    # In front: appended after a trailing "-" they would form a range.
    return "".join(extra) + body


def go_to_js(src):
    out = []
    stack = [{"i": False, "s": False}]
    i = 0
    uses_unicode = False
    while i < len(src):
        ch = src[i]
        mode = stack[-1]
        if ch == "\\":
            nxt = src[i + 1]
            if nxt == "z":
                out.append("$")
                i += 2
            elif nxt == "A":
                out.append("^")
                i += 2
            elif nxt == "x" and src[i + 2] == "{":
                j = src.index("}", i)
                out.append("\\u{" + src[i + 3 : j] + "}")
                uses_unicode = True
                i = j + 1
            elif nxt == "x":
                out.append(src[i : i + 4])
                i += 4
            elif nxt in "pP":
                j = src.index("}", i) if src[i + 2] == "{" else i + 2
                out.append(src[i : j + 1])
                uses_unicode = True
                i = j + 1
            else:
                out.append(src[i : i + 2])
                i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < len(src) and src[j] == "^":
                j += 1
            if j < len(src) and src[j] == "]":
                j += 1
            body_start = i + 1
            while src[j] != "]":
                if src[j] == "\\":
                    j += 2
                elif src.startswith("[:", j):
                    j = src.index(":]", j) + 2
                else:
                    j += 1
            body = src[body_start:j]
            body = re.sub(r"\[:(\w+):\]", lambda m: POSIX[m.group(1)], body)
            neg = body.startswith("^")
            if neg:
                body = body[1:]
            if mode["i"]:
                body = swap_class_items(body)
            out.append("[" + ("^" if neg else "") + body + "]")
            i = j + 1
            continue
        if ch == "(":
            if src.startswith("(?P<", i):
                out.append("(?<")
                stack.append(dict(mode))
                i += 4
                continue
            m = re.match(r"\(\?([a-zA-Z-]*)([:)])", src[i:])
            if m:
                flags, end = m.group(1), m.group(2)
                new = dict(mode)
                on = True
                for f in flags:
                    if f == "-":
                        on = False
                    elif f in "is":
                        new[f] = on
                    else:
                        raise ValueError(f"flag {f} in {src}")
                if end == ")":
                    stack[-1] = new  # applies to the rest of the enclosing group
                    i += len(m.group(0))
                    continue
                out.append("(?:")
                stack.append(new)
                i += len(m.group(0))
                continue
            out.append("(")
            stack.append(dict(mode))
            i += 1
            continue
        if ch == ")":
            stack.pop()
            out.append(")")
            i += 1
            continue
        if ch == "." and mode["s"]:
            out.append("[\\s\\S]")
            i += 1
            continue
        if ch.isalpha() and ch.isascii() and mode["i"]:
            out.append(f"[{ch.lower()}{ch.upper()}]")
            i += 1
            continue
        if ch == "{" and not re.match(r"\{\d*,?\d*\}", src[i:]):
            out.append("\\{")
            i += 1
            continue
        if ch == "}" and not (out and re.search(r"\{\d*,?\d*$", "".join(out[-12:]))):
            out.append("\\}")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out), ("gu" if uses_unicode else "g")


# ---------------------------------------------------------------- samples from a regex

PRINTABLE = [chr(c) for c in range(33, 127)]


def gen(node, rng, groups):
    s = []
    for op, av in node:
        if op is C.LITERAL:
            s.append(chr(av))
        elif op is C.NOT_LITERAL:
            s.append(rng.choice([c for c in PRINTABLE if ord(c) != av]))
        elif op is C.ANY:
            s.append(rng.choice(PRINTABLE[15:90]))
        elif op is C.IN:
            s.append(pick_in(av, rng))
        elif op is C.BRANCH:
            s.append(gen(rng.choice(av[1]), rng, groups))
        elif op is C.SUBPATTERN:
            text = gen(av[-1], rng, groups)
            if av[0] is not None:
                groups[av[0]] = text
            s.append(text)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            hi = lo + 6 if hi == C.MAXREPEAT else hi
            # Prefer the longer end: tokens need their length, and entropy grows with it.
            n = rng.randint(max(lo, (lo + hi) // 2), hi) if hi > lo else lo
            s.append("".join(gen(sub, rng, groups) for _ in range(n)))
        elif op is C.AT:
            pass
        elif op is C.GROUPREF:
            s.append(groups.get(av, ""))
        elif op is C.CATEGORY:
            s.append(pick_category(av, rng))
        else:
            raise ValueError(f"unsupported regex node {op}")
    return "".join(s)


def pick_category(cat, rng):
    if cat is C.CATEGORY_DIGIT:
        return rng.choice("0123456789")
    if cat is C.CATEGORY_WORD:
        return rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    if cat is C.CATEGORY_SPACE:
        return " "
    if cat is C.CATEGORY_NOT_SPACE:
        return rng.choice("abcdefXYZ0123")
    if cat is C.CATEGORY_NOT_DIGIT:
        return rng.choice("abcdefXYZ")
    if cat is C.CATEGORY_NOT_WORD:
        return rng.choice(" .-")
    raise ValueError(cat)


def pick_in(items, rng):
    allowed = set()
    neg = False
    for op, av in items:
        if op is C.NEGATE:
            neg = True
        elif op is C.LITERAL:
            allowed.add(chr(av))
        elif op is C.RANGE:
            allowed.update(chr(c) for c in range(av[0], min(av[1], 0x2FF) + 1))
        elif op is C.CATEGORY:
            for c in PRINTABLE + [" ", "\t", "\n"]:
                if re.fullmatch({C.CATEGORY_DIGIT: r"\d", C.CATEGORY_WORD: r"\w", C.CATEGORY_SPACE: r"\s", C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_NOT_WORD: r"\W"}[av], c):
                    allowed.add(c)
    if neg:
        pool = [c for c in PRINTABLE if c not in allowed and c not in "\"'`"]
    else:
        # Whitespace only when the class allows nothing else.
        pool = sorted(c for c in allowed if not c.isspace()) or sorted(allowed)
    return rng.choice(pool)


def entropy(s):
    if not s:
        return 0.0
    counts = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    return -sum(v / len(s) * math.log2(v / len(s)) for v in counts.values())


def py_pattern(js):
    return js.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")


def secret_of(m, secret_group):
    if secret_group:
        return m.group(secret_group) or ""
    for g in m.groups():
        if g:
            return g
    return m.group(0)


def sample(rule, js, rng, tries=400):
    py = re.compile(py_pattern(js))
    tree = sre_parse.parse(py_pattern(js))
    for _ in range(tries):
        text = gen(tree, rng, {})
        if not any(k.lower() in text.lower() for k in rule["keywords"]):
            text = rule["keywords"][0] + " " + text
        m = py.search(text)
        if not m:
            continue
        secret = secret_of(m, rule.get("secretGroup", 0))
        if entropy(secret) < rule.get("entropy", 0) + 0.05:
            continue
        if any(re.search(py_pattern(a), secret) for a in rule["allowRegexes"]):
            continue
        if any(w.lower() in secret.lower() for w in rule["allowStopwords"]):
            continue
        return text
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror")
    args = ap.parse_args()
    repo, commit, path = SOURCE
    raw = subprocess.run(["git", "--git-dir", os.path.join(args.mirror, repo, "repo"), "show", f"{commit}:{path}"], check=True, capture_output=True).stdout
    cfg = tomllib.loads(raw.decode())
    rules = []
    for r in cfg["rules"]:
        if r["id"] in SKIP or "regex" not in r:
            continue
        js, flags = go_to_js(r["regex"])
        allow_regexes, allow_stop, allow_targets = [], [], []
        for a in r.get("allowlists", []):
            target = a.get("regexTarget", "secret")
            for x in a.get("regexes", []):
                allow_regexes.append(go_to_js(x)[0])
                allow_targets.append(target)
            allow_stop += a.get("stopwords", [])
        rules.append({
            "id": r["id"],
            "regex": js,
            "flags": flags,
            "keywords": [k.lower() for k in r.get("keywords", [])],
            **({"entropy": r["entropy"]} if "entropy" in r else {}),
            **({"secretGroup": r["secretGroup"]} if "secretGroup" in r else {}),
            "allowRegexes": allow_regexes,
            "allowTargets": allow_targets,
            "allowStopwords": allow_stop,
        })
    glob = cfg.get("allowlist", {})
    out = {
        "source": {"repo": "gitleaks/gitleaks", "commit": commit, "path": path, "licence": "MIT (Copyright (c) 2019 Zachary Rice)"},
        "skipped": SKIP,
        "globalAllowRegexes": [go_to_js(x)[0] for x in glob.get("regexes", [])],
        "globalStopwords": glob.get("stopwords", []),
        "rules": rules,
    }
    dest = os.path.join(ROOT, "dataplane/src/pipeline/guardrails/gitleaks-rules.json")
    with open(dest, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    os.makedirs(os.path.join(ROOT, "test/data/guardrails/secrets"), exist_ok=True)
    for name, seed in [("samples", 1), ("test", 2)]:
        rng = random.Random(seed)
        missing = []
        with open(os.path.join(ROOT, f"test/data/guardrails/secrets/{name}.jsonl"), "w", encoding="utf-8") as fh:
            for r in rules:
                text = sample(r, r["regex"], rng)
                if text is None:
                    missing.append(r["id"])
                    continue
                fh.write(json.dumps({"id": f"{name}-{r['id']}", "rule": r["id"], "text": text, "labels": [{"guardrail": "secrets", "category": r["id"]}]}, ensure_ascii=False) + "\n")
        print(name, "rules", len(rules), "without a sample:", missing)


if __name__ == "__main__":
    main()
