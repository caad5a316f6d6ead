/**
 * Test fixture: a published snapshot whose ModelDeployment `claude` names ANTHROPIC_API_KEY, a
 * variable GANTRY_PROVIDER_ENV lists but a pod may not have, beside a deployment it can serve
 * (falling back to claude's model), a tenant and an ApiKey.
 */
import { createHash } from 'node:crypto';
import { PUBLISHED_FORMAT } from './published.ts';

const md = (name: string, model: string, spec: object) => ({
  apiVersion: 'gantry.dev/v1alpha1',
  kind: 'ModelDeployment',
  metadata: { name, namespace: 'gantry' },
  spec: { model, upstreamModel: model, ...spec },
});

export const KEY = 'sk-gantry-ci';

export function unsetEnvSnapshot(version: number, keyDisabled = false): string {
  return JSON.stringify({
    format: PUBLISHED_FORMAT,
    version,
    hash: `h${version}`,
    credentials: {},
    manifests: [
      md('gpt', 'gpt-4o-mini', {
        provider: 'openai',
        baseUrl: 'https://api.openai.example/v1',
        apiKeyEnv: 'OPENAI_API_KEY',
        fallbacks: ['claude-3'],
      }),
      md('claude', 'claude-3', {
        provider: 'anthropic',
        baseUrl: 'https://api.anthropic.example/v1',
        apiKeyEnv: 'ANTHROPIC_API_KEY',
      }),
      {
        apiVersion: 'gantry.dev/v1alpha1',
        kind: 'Tenant',
        metadata: { name: 'acme', namespace: 'gantry' },
        spec: { tier: 'pro', models: ['gpt-4o-mini', 'claude-3'] },
      },
      {
        apiVersion: 'gantry.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'ci', namespace: 'gantry' },
        spec: {
          tenantRef: { name: 'acme' },
          keyHash: createHash('sha256').update(KEY).digest('hex'),
          ...(keyDisabled ? { disabled: true } : {}),
        },
      },
    ],
  });
}

/** The pod's env as the chart sets it: both listed, only OPENAI_API_KEY set. */
export const POD_ENV = {
  GANTRY_PROVIDER_ENV: 'OPENAI_API_KEY,ANTHROPIC_API_KEY',
  OPENAI_API_KEY: 'sk-openai',
};
