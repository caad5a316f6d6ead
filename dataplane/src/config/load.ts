/** Standalone config: a multi-document YAML of the same manifests `kubectl apply -f` takes. */
import { formatAjvErrors, sharedValidators, Kinds, type KindName, type Manifest } from '@gantry/crds';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { compile, type CompileOptions, type CompileResult, type LocatedManifest } from './compile.ts';
import { keyStatements, type KeyStatement } from './revocations.ts';

const isKind = (k: unknown): k is KindName => typeof k === 'string' && Object.hasOwn(Kinds, k);

/** Parse and schema-check every document; errors name the file, the document and the field. */
export function parseManifests(text: string, file: string): { items: LocatedManifest[]; errors: string[] } {
  const items: LocatedManifest[] = [];
  const errors: string[] = [];
  const name = basename(file);
  parseAllDocuments(text).forEach((doc, i) => {
    const at = `${name} document ${i + 1}`;
    if (doc.errors.length > 0) {
      for (const e of doc.errors) errors.push(`${at}: ${e.message.split('\n')[0]}`);
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const kind = (value as { kind?: unknown }).kind;
    if (!isKind(kind)) {
      errors.push(`${at}: kind: must be one of ${Object.keys(Kinds).join(', ')}`);
      return;
    }
    const objectName = (value as { metadata?: { name?: unknown } }).metadata?.name;
    const where = `${at} (${kind}/${typeof objectName === 'string' ? objectName : '?'})`;
    const validate = sharedValidators()[kind];
    if (!validate(value)) {
      for (const message of formatAjvErrors(validate.errors ?? [])) errors.push(`${where}: ${message}`);
      return;
    }
    items.push({ manifest: value as Manifest, where });
  });
  return { items, errors };
}

export type LoadOptions = Omit<CompileOptions, 'source'>;

/**
 * `sha256` of the file's bytes tells pods serving the same file apart from the rest; a
 * rejected file still carries what it says about keys, so revocations in it apply (revocations.ts).
 */
export type LoadResult = CompileResult & {
  sha256?: string;
  keyStatements?: ReadonlyMap<string, KeyStatement>;
};

export async function loadConfigFile(file: string, opts: LoadOptions): Promise<LoadResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { ok: false, errors: [`${file}: ${(err as Error).message}`] };
  }
  const result = loadConfigText(text, file, opts);
  const sha256 = createHash('sha256').update(text).digest('hex');
  return result.ok ? { ...result, sha256 } : { ...result, sha256, keyStatements: keyStatements(text) };
}

function loadConfigText(text: string, file: string, opts: LoadOptions): CompileResult {
  let parsed: { items: LocatedManifest[]; errors: string[] };
  try {
    parsed = parseManifests(text, file);
  } catch (err) {
    // e.g. an unresolved YAML alias: the parser reports it only when the document is read.
    return { ok: false, errors: [`${basename(file)}: ${(err as Error).message}`] };
  }
  const { items, errors } = parsed;
  if (errors.length > 0) return { ok: false, errors };
  // A file caught half-written (or emptied by mistake) would lock every caller out.
  if (items.length === 0) return { ok: false, errors: [`${basename(file)}: no manifests found`] };
  return compile(items, { ...opts, source: file });
}
