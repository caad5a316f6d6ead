import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CATEGORY,
  CHART_CRD_ANNOTATIONS,
  CHART_CRDS_VALUE,
  KIND_INFO,
  renderChartCrdFiles,
  renderCrdFiles,
  renderCrds,
} from './render.ts';
import { GROUP, VERSION, type KindName } from './schemas.ts';
import { structuralProblems } from './structural.ts';

const OUTPUTS = {
  'crds/generated': { dir: fileURLToPath(new URL('../generated/', import.meta.url)), render: renderCrdFiles },
  'charts/gantry/templates/crds': {
    dir: fileURLToPath(new URL('../../charts/gantry/templates/crds/', import.meta.url)),
    render: renderChartCrdFiles,
  },
};
const STALE = 'is stale: run `npm run crds:generate`';

describe('generated CRD files', () => {
  const files = renderCrdFiles();

  for (const [label, { dir, render }] of Object.entries(OUTPUTS)) {
    it(`${label} matches the schemas`, () => {
      const files = render();
      const present = existsSync(dir)
        ? readdirSync(dir)
            .filter((name) => name.endsWith(`.${GROUP}.yaml`))
            .sort()
        : [];
      expect(present, `${label} ${STALE}`).toEqual(files.map((file) => file.fileName).sort());
      for (const file of files) {
        const onDisk = readFileSync(join(dir, file.fileName), 'utf8');
        expect(onDisk === file.content, `${label}/${file.fileName} ${STALE}`).toBe(true);
      }
    });
  }

  it('renders deterministically and parses back to the CRD objects', () => {
    expect(renderCrdFiles()).toEqual(files);
    const crds = renderCrds();
    files.forEach((file, i) => expect(parse(file.content)).toEqual(crds[i]));
  });

  it('says where the files come from', () => {
    for (const file of [...files, ...renderChartCrdFiles()])
      expect(file.content).toMatch(/^# Generated from crds\/src\/schemas\.ts by `npm run crds:generate`/);
  });

  it('gives the chart the same CRDs, switchable and kept on uninstall', () => {
    const crds = renderCrds();
    expect(renderChartCrdFiles().map((file) => file.fileName)).toEqual(files.map((file) => file.fileName));
    renderChartCrdFiles().forEach((file, i) => {
      const lines = file.content.split('\n');
      // Line 0 is the generated-file header; the condition wraps everything else.
      expect(lines[1]).toBe(`{{- if ${CHART_CRDS_VALUE} }}`);
      expect(lines.at(-2)).toBe('{{- end }}');
      const body = lines.slice(2, -2).join('\n');
      expect(body).not.toContain('{{');
      const crd = crds[i]!;
      expect(parse(body)).toEqual({
        ...crd,
        metadata: { ...crd.metadata, annotations: CHART_CRD_ANNOTATIONS },
      });
    });
  });
});

/** Keywords the apiserver rejects (or silently loses) anywhere in a CRD schema. */
const FORBIDDEN = [
  '$schema',
  '$id',
  'id',
  '$ref',
  '$defs',
  'definitions',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'uniqueItems',
  'patternProperties',
  'dependencies',
  'additionalItems',
];

/** Every key used as a schema keyword, walking properties, items and additionalProperties. */
function keywords(node: unknown, out = new Set<string>()): Set<string> {
  if (typeof node !== 'object' || node === null) return out;
  const schema = node as Record<string, unknown>;
  for (const key of Object.keys(schema)) out.add(key);
  for (const sub of Object.values((schema.properties ?? {}) as Record<string, unknown>)) keywords(sub, out);
  keywords(schema.items, out);
  keywords(schema.additionalProperties, out);
  return out;
}

/** The schema node a printer column's jsonPath points at (`[...]` filters step into items). */
function nodeAt(schema: unknown, jsonPath: string): unknown {
  let node = schema as Record<string, unknown> | undefined;
  for (const segment of jsonPath.replace(/^\./, '').split(/\.(?![^[]*\])/)) {
    const name = segment.replace(/\[.*\]$/, '');
    node = (node?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];
    if (segment !== name) node = node?.items as Record<string, unknown> | undefined;
  }
  return node;
}

const EXPECTED_COLUMNS: Record<KindName, string[]> = {
  ModelDeployment: ['Model', 'Provider', 'Priority', 'Weight', 'Ready', 'Age'],
  Tenant: ['Tier', 'Wallet', 'Ready', 'Age'],
  ApiKey: ['Tenant', 'Budget', 'Spend', 'Remaining', 'Role', 'Ready', 'Age'],
  GuardrailPolicy: ['Ready', 'Age'],
  CachePolicy: ['Ready', 'Age'],
};

/** Short names of built-in kinds and of widely installed CRDs (Cluster API's `md`). */
const TAKEN_SHORT_NAMES = new Set(
  (
    'cm cs csr crd crds cj ds deploy ep ev hpa ing ingclass limits netpol no ns pc pdb po psp pv pvc ' +
    'quota rc rs sa sc sts svc md mhc'
  ).split(' '),
);

describe.each(renderCrds().map((crd) => [crd.spec.names.kind as KindName, crd] as const))(
  '%s CRD',
  (kind, crd) => {
    const version = crd.spec.versions[0];
    const schema = version?.schema.openAPIV3Schema;

    it('is namespaced, served and stored in gantry.dev/v1alpha1, in the gantry category', () => {
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${GROUP}`);
      expect(crd.spec.group).toBe(GROUP);
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.spec.versions).toHaveLength(1);
      expect(version).toMatchObject({ name: VERSION, served: true, storage: true });
      expect(crd.spec.names.categories).toEqual([CATEGORY]);
    });

    it('has a structural schema', () => {
      expect(structuralProblems(schema)).toEqual([]);
    });

    it('uses no forbidden keyword anywhere', () => {
      const used = keywords(schema);
      expect(FORBIDDEN.filter((key) => used.has(key))).toEqual([]);
    });

    it('leaves metadata to the apiserver', () => {
      expect(schema?.properties?.metadata).toEqual({ type: 'object' });
    });

    it('has the status subresource', () => {
      expect(version?.subresources).toEqual({ status: {} });
      expect(schema?.properties?.status?.properties?.conditions?.type).toBe('array');
    });

    it('has printer columns that point at declared fields', () => {
      const columns = version?.additionalPrinterColumns ?? [];
      expect(columns.map((column) => column.name)).toEqual(EXPECTED_COLUMNS[kind]);
      expect(columns.find((c) => c.name === 'Ready')?.jsonPath).toBe(
        '.status.conditions[?(@.type=="Ready")].status',
      );
      expect(columns.find((c) => c.name === 'Age')).toMatchObject({
        type: 'date',
        jsonPath: '.metadata.creationTimestamp',
      });
      for (const column of columns) {
        if (column.jsonPath.startsWith('.metadata.')) continue;
        expect(nodeAt(schema, column.jsonPath), `${column.name}: ${column.jsonPath}`).toBeDefined();
      }
    });

    it('describes every Secret reference, for kubectl explain', () => {
      const refs = Object.entries(schema?.properties?.spec?.properties ?? {}).filter(([name]) =>
        /secretRef$/i.test(name),
      );
      for (const [name, node] of refs)
        expect((node as { description?: string }).description, name).toMatch(
          /Secret .*gantry\.dev\/credentials=/,
        );
    });

    it('has short names that collide with nothing well known', () => {
      for (const name of crd.spec.names.shortNames) expect(TAKEN_SHORT_NAMES.has(name), name).toBe(false);
    });
  },
);

describe('CRD names', () => {
  it('are unique across kinds', () => {
    const all = Object.values(KIND_INFO).flatMap((info) => [info.plural, ...info.shortNames]);
    expect(new Set(all).size).toBe(all.length);
  });
});
