"""
Benign look-alikes for the secrets guard: identifiers and digests that are random-looking
but grant nothing (UUIDs, git and content hashes, base64 ids, integrity strings, public
keys), and credentials published in vendor documentation. Written for this project;
two seeds give a dev file (used while building the guard) and a test file (never looked at
while building it).

  python3 scripts/guards/secrets_benign.py
"""

import base64
import json
import os
import random
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hexs(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def b64(rng, nbytes, url=False):
    raw = bytes(rng.getrandbits(8) for _ in range(nbytes))
    s = base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)
    return s.decode().rstrip("=") if url else s.decode()


def uid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


TEMPLATES = [
    lambda r: f"request_id={uid(r)} method=GET path=/v1/orders status=200",
    lambda r: f"The order {uid(r)} was shipped yesterday; can you draft the customer email?",
    lambda r: f"metadata:\n  uid: {uid(r)}\n  resourceVersion: \"{r.randint(10000, 999999)}\"",
    lambda r: f"Please review commit {hexs(r, 40)} before we tag the release.",
    lambda r: f"git checkout {hexs(r, 12)} && npm test",
    lambda r: f"image: registry.example.com/api@sha256:{hexs(r, 64)}",
    lambda r: f"The file's SHA-256 checksum is {hexs(r, 64)}, does it match the download page?",
    lambda r: f"md5sum report.pdf -> {hexs(r, 32)}",
    lambda r: f"ETag: \"{hexs(r, 32)}\"",
    lambda r: f"\"integrity\": \"sha512-{b64(r, 64)}\"",
    lambda r: f"https://cdn.example.com/assets/app.{hexs(r, 20)}.js failed to load",
    lambda r: f"Watch this: https://www.youtube.com/watch?v={b64(r, 8, url=True)}",
    lambda r: f"The Drive file id is {b64(r, 25, url=True)}, can you link it in the doc?",
    lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(r, 32)[:43]} deploy@ci",
    lambda r: f"trace_id: {hexs(r, 32)} span_id: {hexs(r, 16)}",
    lambda r: f"correlationId: {uid(r)}",
    lambda r: f"Stripe customer cus_{b64(r, 10, url=True)[:14]} has two open invoices.",
    lambda r: f"Our Sentry release is {hexs(r, 40)} and the DSN project id is {r.randint(100000, 999999)}.",
    lambda r: f"nonce=\"{b64(r, 16)}\" in the CSP header",
    lambda r: f"The PR's merge commit is {hexs(r, 7)}; the tree hash is {hexs(r, 40)}.",
    lambda r: f"Idempotency-Key: {uid(r)}",
    lambda r: f"\"nextPageToken\": \"{b64(r, 30, url=True)}\"",
    lambda r: f"client_id: {uid(r)}",
    lambda r: f"\"key\": \"{uid(r)}\", \"value\": \"blue\"",
    lambda r: f"public_key: {b64(r, 32)}",
    lambda r: f"The S3 object key is uploads/{hexs(r, 32)}/report.csv",
    lambda r: f"key_id = {hexs(r, 16)}",
    lambda r: f"csrf-token content=\"{b64(r, 24)}\" in the page head",
]

DOCUMENTED = [
    "AWS docs example: aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "export AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE",
    "Stripe's API reference uses sk_test_4eC39HqLyjWDarjtT1zdp7dc in every example.",
    "The jwt.io sample eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c decodes to John Doe.",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "SLACK_BOT_TOKEN=xoxb-your-bot-token-here",
    "OPENAI_API_KEY=<your-api-key>",
    "api_key: ${OPENAI_API_KEY}",
    "password: changeme",
    "Set token = \"YOUR_TOKEN_HERE\" in the config.",
    "client_secret: '********'",
]


def generate(seed, n):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append(rng.choice(TEMPLATES)(rng))
    return out + DOCUMENTED


def main():
    d = os.path.join(ROOT, "test/data/guardrails/secrets")
    os.makedirs(d, exist_ok=True)
    for name, seed in [("benign-dev", 101), ("benign-test", 202)]:
        with open(os.path.join(d, f"{name}.jsonl"), "w", encoding="utf-8") as fh:
            for i, t in enumerate(generate(seed, 240)):
                fh.write(json.dumps({"id": f"{name}-{i:03d}", "text": t, "labels": []}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
