/**
 * The Helm chart without helm: Chart.yaml and values.yaml parse, values.yaml validates
 * against values.schema.json (which declares every value and nothing else), every
 * `.Values.x.y` a template reads is declared in values.yaml (and every value is read by a
 * template), the template actions are balanced, the operator's RBAC names the real CRDs and
 * the default config is a valid set of Gantry manifests. test/chart/helm.test.ts renders it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { KIND_INFO } from './render.ts';
import { compileValidators, formatAjvErrors } from './validate.ts';
import type { KindName } from './schemas.ts';

const CHART = fileURLToPath(new URL('../../charts/gantry/', import.meta.url));
const read = (path: string) => readFileSync(join(CHART, path), 'utf8');

// Recursive: the CRDs are templates too, under templates/crds/.
const templates = readdirSync(join(CHART, 'templates'), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => {
    const name = join(entry.parentPath, entry.name).slice(join(CHART, 'templates/').length);
    return { name, text: read(join('templates', name)) };
  });
const values = parse(read('values.yaml')) as Record<string, unknown>;

/** Dotted paths of every leaf (scalar, list or empty map) of a values tree. */
function leaves(node: unknown, prefix = ''): string[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node) || Object.keys(node).length === 0) {
    return [prefix];
  }
  return Object.entries(node).flatMap(([key, sub]) => leaves(sub, prefix ? `${prefix}.${key}` : key));
}

function has(tree: unknown, path: string): boolean {
  let node = tree;
  for (const key of path.split('.')) {
    if (typeof node !== 'object' || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

const referenced = templates.flatMap(({ name, text }) =>
  [...text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)].map((m) => ({ name, path: m[1]!.slice(1) })),
);

describe('charts/gantry', () => {
  it('has a v2 Chart.yaml', () => {
    const chart = parse(read('Chart.yaml')) as Record<string, unknown>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'gantry', type: 'application' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('reads only values that values.yaml declares', () => {
    const missing = referenced
      .filter((ref) => !has(values, ref.path))
      .map((ref) => `${ref.name}: ${ref.path}`);
    expect(missing).toEqual([]);
  });

  it('declares no value that no template reads', () => {
    const unused = leaves(values).filter(
      (leaf) => !referenced.some((ref) => leaf === ref.path || leaf.startsWith(`${ref.path}.`)),
    );
    expect(unused).toEqual([]);
  });

  it.each(templates.map((t) => [t.name, t.text] as const))(
    '%s has balanced template actions',
    (_name, text) => {
      expect(text.split('{{').length).toBe(text.split('}}').length);
      const opens = text.match(/\{\{-?\s*(if|range|with|define)\b/g) ?? [];
      const ends = text.match(/\{\{-?\s*end\b/g) ?? [];
      expect(opens.length).toBe(ends.length);
    },
  );

  it('finds the templates in subfolders (the CRDs)', () => {
    const crds = templates.filter((t) => t.name.startsWith('crds/')).map((t) => t.name);
    expect(crds.sort()).toEqual(
      Object.values(KIND_INFO)
        .map((info) => `crds/${info.plural}.gantry.dev.yaml`)
        .sort(),
    );
  });

  it('lets the operator read exactly the Gantry CRDs and patch exactly their status', () => {
    const rbac = templates.find((t) => t.name === 'rbac.yaml')?.text ?? '';
    const lists = [...rbac.matchAll(/resources:\s*\[([^\]]*)\]/g)].map((m) =>
      m[1]!.split(',').map((s) => s.trim().replace(/"/g, '')),
    );
    const plurals = Object.values(KIND_INFO)
      .map((info) => info.plural)
      .sort();
    expect(lists.map((list) => [...list].sort())).toContainEqual(plurals);
    expect(lists.map((list) => [...list].sort())).toContainEqual(plurals.map((p) => `${p}/status`));
  });

  it('has a values.schema.json that values.yaml satisfies', () => {
    const schema = JSON.parse(read('values.schema.json')) as Record<string, unknown>;
    const validate = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true }).compile(schema);
    expect(validate(values) ? [] : validate.errors).toEqual([]);
  });

  it('has a schema that declares every value and refuses unknown ones', () => {
    const schema = JSON.parse(read('values.schema.json')) as Record<string, unknown>;
    const validate = new Ajv({ strict: true, allowUnionTypes: true }).compile(schema);
    /** Dotted paths the schema declares, following `properties` only. */
    const declared = (node: unknown, prefix = ''): string[] => {
      const props = (node as { properties?: Record<string, unknown> }).properties;
      if (!props) return [prefix];
      return Object.entries(props).flatMap(([k, sub]) => declared(sub, prefix ? `${prefix}.${k}` : k));
    };
    const paths = declared(schema);
    const undeclared = leaves(values).filter(
      (leaf) =>
        !paths.some((path) => leaf === path || leaf.startsWith(`${path}.`) || path.startsWith(`${leaf}.`)),
    );
    expect(undeclared).toEqual([]);
    expect(validate({ ...values, replicas: 3 })).toBe(false);
    expect(validate({ ...values, mode: 'operater' })).toBe(false);
    expect(validate({ ...values, fakeProvider: 'on' })).toBe(false);
    expect(validate({ ...values, redis: { ...(values.redis as object), url: 'localhost:6379' } })).toBe(
      false,
    );
  });

  it('ships a default config of valid Gantry manifests', () => {
    const validators = compileValidators();
    const docs = parseAllDocuments(String(values.config)).map((doc) => doc.toJS() as { kind: KindName });
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      const validate = validators[doc.kind];
      expect(validate, `unknown kind ${doc.kind}`).toBeDefined();
      expect(validate(doc) ? [] : formatAjvErrors(validate.errors)).toEqual([]);
    }
  });
});
