/**
 * Helm for the tests: the binary scripts/ensure-helm.sh builds (once, cached), and
 * `renderChart(values)`, the chart's objects as `helm template` renders them, for the chart
 * tests and for the operator e2e, which applies them server-side with --dry-run=server.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHART_DIR = join(ROOT, 'charts/gantry');

/** A rendered Kubernetes object, as loosely typed as YAML gives it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  /** `.Capabilities.KubeVersion` (helm's --kube-version); helm's own default when unset. */
  kubeVersion?: string;
}

let helmPath: Promise<string> | undefined;

/** The helm binary: GANTRY_HELM, else the one ensure-helm.sh builds (built now when missing). */
export function helmBinary(): Promise<string> {
  helmPath ??= process.env.GANTRY_HELM
    ? Promise.resolve(process.env.GANTRY_HELM)
    : run('bash', [join(ROOT, 'scripts/ensure-helm.sh')], { timeout: 30 * 60_000 }).then(({ stdout }) =>
        stdout.trim().split('\n').at(-1)!,
      );
  return helmPath;
}

/** Runs helm with the given arguments; rejects with helm's stderr when it fails. */
export async function helm(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const bin = await helmBinary();
  try {
    return await run(bin, args, { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** Values as a temporary file (JSON is YAML), so nested maps and lists need no --set escaping. */
async function withValuesFile<T>(values: object, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-helm-'));
  try {
    const file = join(dir, 'values.json');
    await writeFile(file, JSON.stringify(values));
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `helm template` of charts/gantry with these values over values.yaml: every object it renders. */
export async function renderChart(values: object = {}, opts: RenderOptions = {}): Promise<KubeObject[]> {
  const { release = 'gantry', namespace = 'gantry' } = opts;
  const { stdout } = await withValuesFile(values, (file) =>
    helm(['template', release, CHART_DIR, '--namespace', namespace, '--values', file]),
  );
  return parseAllDocuments(stdout)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((obj): obj is KubeObject => obj !== null);
}

/** `helm lint --strict` with these values; resolves to helm's output, rejects on any finding. */
export async function lintChart(values: object = {}): Promise<string> {
  const { stdout } = await withValuesFile(values, (file) =>
    helm(['lint', '--strict', CHART_DIR, '--values', file]),
  );
  return stdout;
}

/**
 * The NOTES.txt helm prints after an install, rendered with these values. `helm template`
 * skips NOTES.txt and `helm install --dry-run` needs a cluster, so a copy of the chart gets
 * one more template that renders the notes' text through `tpl`.
 */
export async function renderNotes(values: object = {}, opts: RenderOptions = {}): Promise<string> {
  const { release = 'gantry', namespace = 'gantry', kubeVersion } = opts;
  const dir = await mkdtemp(join(tmpdir(), 'gantry-notes-'));
  try {
    const chart = join(dir, 'gantry');
    await cp(CHART_DIR, chart, { recursive: true });
    await cp(join(chart, 'templates/NOTES.txt'), join(chart, 'notes-preview.txt'));
    await writeFile(
      join(chart, 'templates/notes-preview.yaml'),
      'notes: {{ tpl (.Files.Get "notes-preview.txt") . | toJson }}\n',
    );
    const file = join(dir, 'values.json');
    await writeFile(file, JSON.stringify(values));
    const { stdout } = await helm([
      'template',
      release,
      chart,
      '--namespace',
      namespace,
      '--values',
      file,
      '--show-only',
      'templates/notes-preview.yaml',
      ...(kubeVersion ? ['--kube-version', kubeVersion] : []),
    ]);
    return (parse(stdout) as { notes: string }).notes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
