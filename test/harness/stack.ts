/**
 * A real Gantry on loopback in front of real fake-provider servers, with a config file
 * written to a temp dir. Tests talk to it over HTTP with the official SDKs.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeProvider, type FakeProvider } from '../../dataplane/src/fake-provider/index.ts';
import { startGateway, type Gateway, type GatewayOptions } from '../../dataplane/src/gateway.ts';

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export interface Stack {
  gateway: Gateway;
  fakes: FakeProvider[];
  /** Base URL for OpenAI clients: `<gateway>/v1`. */
  baseURL: string;
  configFile: string;
  /** Replace the config file (hot reload picks it up). */
  writeConfig(yaml: string): Promise<void>;
  close(): Promise<void>;
}

export interface StackOptions extends Partial<Omit<GatewayOptions, 'configFile'>> {
  fakes?: number;
}

/** `yaml` receives the fakes' URLs and returns the manifests. */
export async function startStack(
  yaml: (fakeUrls: string[]) => string,
  opts: StackOptions = {},
): Promise<Stack> {
  const fakes = await Promise.all(
    Array.from({ length: opts.fakes ?? 1 }, () => startFakeProvider({ port: 0 })),
  );
  const dir = await mkdtemp(join(tmpdir(), 'gantry-test-'));
  const configFile = join(dir, 'gantry.yaml');
  await writeFile(configFile, yaml(fakes.map((f) => f.url)));
  const gateway = await startGateway({
    env: { FAKE_PROVIDER_KEY: 'sk-fake' },
    watch: false,
    preStopMs: 0,
    drainTimeoutMs: 200,
    ...opts,
    configFile,
  });
  return {
    gateway,
    fakes,
    baseURL: `${gateway.url}/v1`,
    configFile,
    writeConfig: (text) => writeFile(configFile, text),
    async close() {
      await gateway.close();
      await Promise.all(fakes.map((f) => f.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Manifest builders, so tests state only what matters to them. */
export interface DeploymentSpec {
  name: string;
  model: string;
  provider?: string;
  baseUrl: string;
  upstreamModel?: string;
  priority?: number;
  weight?: number;
  fallbacks?: string[];
  capabilities?: string[];
  contextWindow?: number;
  timeoutMs?: number;
  firstTokenTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  pricing?: { inputPerMillionTokens: number; outputPerMillionTokens: number; [unit: string]: number };
  extra?: Record<string, unknown>;
}

export function deployment(d: DeploymentSpec): string {
  const spec: Record<string, unknown> = {
    model: d.model,
    provider: d.provider ?? 'openai',
    upstreamModel: d.upstreamModel ?? d.model,
    baseUrl: d.baseUrl,
    apiKeyEnv: 'FAKE_PROVIDER_KEY',
    priority: d.priority ?? 1,
    weight: d.weight ?? 1,
    pricing: d.pricing ?? { inputPerMillionTokens: 1, outputPerMillionTokens: 2 },
    ...(d.fallbacks && { fallbacks: d.fallbacks }),
    ...(d.capabilities && { capabilities: d.capabilities }),
    ...(d.contextWindow && { contextWindow: d.contextWindow }),
    ...(d.timeoutMs && { timeoutMs: d.timeoutMs }),
    ...(d.firstTokenTimeoutMs && { firstTokenTimeoutMs: d.firstTokenTimeoutMs }),
    ...(d.streamIdleTimeoutMs && { streamIdleTimeoutMs: d.streamIdleTimeoutMs }),
    ...d.extra,
  };
  return manifest('ModelDeployment', d.name, spec);
}

/** Tenants of tests have the semantic cache off unless `extra.cache` turns it on: repeated prompts must reach the provider. */
export function tenant(name: string, models: string[] = ['*'], extra: Record<string, unknown> = {}): string {
  return manifest('Tenant', name, { tier: 'pro', models, cache: { enabled: false }, ...extra });
}

export function apiKey(
  name: string,
  key: string,
  tenantName: string,
  extra: Record<string, unknown> = {},
): string {
  return manifest('ApiKey', name, { tenantRef: { name: tenantName }, keyHash: sha256(key), ...extra });
}

export function manifest(kind: string, name: string, spec: Record<string, unknown>): string {
  return `---\n${JSON.stringify({ apiVersion: 'gantry.dev/v1alpha1', kind, metadata: { name, namespace: 'default' }, spec })}\n`;
}

/** Base URL of a fake provider for a provider kind. */
export function fakeBase(url: string, provider = 'openai'): string {
  if (provider === 'gemini') return `${url}/v1beta`;
  if (provider === 'azure-openai') return url;
  return `${url}/v1`;
}
