/**
 * A GuardrailPolicy's PII entity names are checked when the config loads: a misspelt name
 * used to turn that kind off without a word.
 */
import { PiiEntities } from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import { PiiKinds } from '../pipeline/guardrails/pii.ts';
import { parseManifests } from './load.ts';

const policy = (entities: string): string => `
apiVersion: gantry.dev/v1alpha1
kind: GuardrailPolicy
metadata: { name: strict, namespace: default }
spec:
  pii: { action: redact, entities: ${entities} }
`;

describe('GuardrailPolicy pii.entities', () => {
  it('accepts every kind the detector reports', () => {
    const { items, errors } = parseManifests(policy(`[${PiiKinds.join(', ')}]`), 'gantry.yaml');
    expect(errors).toEqual([]);
    expect(items).toHaveLength(1);
  });

  it('rejects an unknown name with an error that names the place and lists the valid ones', () => {
    const { items, errors } = parseManifests(policy('[EMAIL, PHONE_NUMBER]'), 'gantry.yaml');
    expect(items).toEqual([]);
    expect(errors).toEqual([
      `gantry.yaml document 1 (GuardrailPolicy/strict): /spec/pii/entities/1: must be one of: ${PiiEntities.join(', ')}`,
    ]);
  });

  it('rejects a lower-case spelling too (names are the upper-case kinds findings carry)', () => {
    const { errors } = parseManifests(policy('[email]'), 'gantry.yaml');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('/spec/pii/entities/0: must be one of: EMAIL, PHONE');
  });
});
