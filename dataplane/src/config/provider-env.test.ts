import { describe, expect, it } from 'vitest';
import { providerEnvNames, providerEnvOnly } from './provider-env.ts';

describe('the provider variables a published snapshot may name', () => {
  const podEnv = {
    GANTRY_PROVIDER_ENV: 'OPENAI_API_KEY, ANTHROPIC_API_KEY,,UNSET_KEY',
    OPENAI_API_KEY: 'sk-openai',
    ANTHROPIC_API_KEY: 'sk-ant',
    GANTRY_REDIS_PASSWORD: 'redis-pw',
    KUBERNETES_SERVICE_HOST: '10.0.0.1',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
  };

  it('keeps only the listed variables: no GANTRY_* setting, no KUBERNETES_*, no cloud credential', () => {
    expect(providerEnvOnly(podEnv)).toEqual({ OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant' });
  });

  it('offers nothing when nothing is listed', () => {
    const { GANTRY_PROVIDER_ENV: _, ...unlisted } = podEnv;
    expect(providerEnvOnly(unlisted)).toEqual({});
  });

  it.each([
    ['a GANTRY_* name', 'OPENAI_API_KEY,GANTRY_REDIS_PASSWORD', /GANTRY_REDIS_PASSWORD: each entry/],
    ['a lower-case gantry_ name', 'gantry_admin_key', /gantry_admin_key: each entry/],
    ['a name no variable can have', 'OPENAI-KEY', /OPENAI-KEY: each entry/],
  ])('refuses %s at start-up', (_, value, message) => {
    expect(() => providerEnvNames(value)).toThrow(message);
  });
});
