import { describe, expect, it } from 'vitest';
import { detect } from './secrets.ts';

const categories = (text: string): string[] => detect(text).map((f) => f.category);
const spans = (text: string): string[] => detect(text).map((f) => text.slice(f.start, f.end));

describe('secrets detector', () => {
  it.each([
    ['aws_access_key_id = AKIA7ZX27UVEZLVP5OBV', 'AWS_ACCESS_KEY'],
    ['aws_secret_access_key = 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', 'AWS_SECRET_KEY'],
    ['key: "AIza3UzKvbXUvIGPDI1waXH4YIqH3UPwWCv5ClQ"', 'GCP_API_KEY'],
    ['AZURE_CLIENT_SECRET=DuM8Q~PJz2HrC4Xd~0Jvef3MHS_WAIovWGA83iAc', 'AZURE_CLIENT_SECRET'],
    ['GITHUB_TOKEN: ghp_wIjZ3lN1R3p0uB39vSKJMV3VrORnkZbZQP6s', 'GITHUB_TOKEN'],
    ['PRIVATE-TOKEN: glpat-uh4rw5AAefCiOHzR2HhZ', 'GITLAB_TOKEN'],
    ['xoxb-137024256512-5543225815955-GgC4ERD2ATqDkwKq3GckBkf0', 'SLACK_TOKEN'],
    ['https://hooks.slack.com/services/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', 'SLACK_WEBHOOK'],
    ['stripe.api_key = "sk_live_BHLKHgZVuRokLERfE2O0AC3o"', 'STRIPE_KEY'],
    ['OPENAI_API_KEY=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', 'OPENAI_KEY'],
    [
      'sk-ant-api03-bmE7Qup08LagtTxnwfNdC36qQ1KMj6x1ZxLCDCyJiLBCu1N5yCyJBoBpWD8CeLC73rhacbkALdWHNYfMeoI2C1-P0TxICAA',
      'ANTHROPIC_KEY',
    ],
    ['TWILIO_API_KEY=SKce8ed632edb1f64ffbfbb54f182774a1', 'TWILIO_KEY'],
    ['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', 'SENDGRID_KEY'],
    ['//registry.npmjs.org/:_authToken=npm_tWvdQBTFbQPsyywGf9UcEqolVz49yrshZibm', 'NPM_TOKEN'],
    [
      'password = pypi-AgEIcHlwaS5vcmcQjqkZS3Y5yytVABLSSsVIvmePX6RniVzY_AwWpEoYQOLwRj9V8WZqO0bHKIY3Nc4UGA6T-',
      'PYPI_TOKEN',
    ],
    ['HF_TOKEN=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', 'HUGGINGFACE_TOKEN'],
    ['DATABASE_URL=postgres://app:Xk9mP2vL7qW3z@db.internal:5432/prod', 'URL_CREDENTIALS'],
    [
      '"client_secret": "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde"',
      'GENERIC_CREDENTIAL',
    ],
    ['DB_PASSWORD=Tr0ub4dor&3xQ!', 'GENERIC_CREDENTIAL'],
  ])('finds %s', (text, category) => {
    expect(categories(text)).toEqual([category]);
  });

  it('reports the password alone in a connection URL so redaction keeps the URL', () => {
    expect(spans('postgres://app:Xk9mP2vL7qW3z@db:5432/prod')).toEqual(['Xk9mP2vL7qW3z']);
  });

  it('validates JWT headers: real algorithm yes, garbage or alg none no', () => {
    const jwt =
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1Xzg4MTIiLCJyb2xlIjoiYWRtaW4iLCJleHAiOjE3NjcyMjU2MDB9.8MTvNY8lu-xoQ63BFi2kdhRk860Nqq2Rdhlgu0DHwzi';
    expect(categories(`Authorization: Bearer ${jwt}`)).toEqual(['JWT']);
    expect(categories('eyJub3Rqc29uIG9rYXk.eyJzdWIiOiIxIn0xxxxxxxx.abcdefghijklmnopqrstuvwxyz')).toEqual([]);
    expect(categories('eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.')).toEqual([]);
  });

  it('needs a real base64 body for a PEM private key', () => {
    const body =
      'Nak8Bo6oCLEd2sIwViN4F2/FF3KQBrpcVnKeqZ5tHy19AIbtn44qarifyWuktN03\nMjjoXnImAnxawVTFiLhOQF5HMHQmGi0gHHPQ3FxdvCJnZdXx+1eWuFH3c0F2WT9E';
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----`;
    expect(spans(`key:\n${pem}\nthanks`)).toEqual([pem]);
    expect(categories('-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----')).toEqual([]);
    expect(categories(`-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----`)).toEqual([]);
  });

  it.each([
    'The AWS docs use AKIAIOSFODNN7EXAMPLE and wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY as sample credentials.',
    'aws_access_key_id = <your-access-key-id>',
    'OPENAI_API_KEY=${OPENAI_API_KEY}',
    'export API_KEY=xxxxxxxxxxxxxxxxxxxxxxxx',
    'password = os.environ["DB_PASSWORD"]',
    'const token = await getAccessToken(clientId, clientSecret);',
    'if (password.length < 12) throw new Error("password too short");',
    'api_key = settings.OPENAI_API_KEY',
    'Fixed in commit d81bffd291759e4bfe2a3812ba54687a44efa665.',
    'DATABASE_URL=postgres://user:password@localhost:5432/mydb',
    'max_tokens: 4096, token_type: bearer',
    'Publishable key pk_live_51HqLyjWDarjtT1zdp7dc is safe to embed.',
    'STRIPE_SECRET=sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  ])('ignores %s', (text) => {
    expect(detect(text)).toEqual([]);
  });
});
