/**
 * The CustomResourceDefinition objects of the Gantry API, built from the TypeBox schemas,
 * and their YAML files. Pure: generate.ts writes the files, the tests compare them.
 */
import { stringify } from 'yaml';
import { toOpenApiV3, type OpenApiSchema } from './openapi.ts';
import { GROUP, Kinds, VERSION, type KindName } from './schemas.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: OpenApiSchema };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

interface KindInfo {
  plural: string;
  /** Prefixed with "g" where a plain one is taken (e.g. `md` is Cluster API's MachineDeployment). */
  shortNames: string[];
  description: string;
  columns: PrinterColumn[];
}

export const CATEGORY = 'gantry';

const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const KIND_INFO: Record<KindName, KindInfo> = {
  ModelDeployment: {
    plural: 'modeldeployments',
    shortNames: ['gmd'],
    description:
      'ModelDeployment is one upstream model behind a client-facing model id: provider, credentials, ' +
      'pricing, priority and weight for failover and load balancing.',
    columns: [
      { name: 'Model', type: 'string', jsonPath: '.spec.model' },
      { name: 'Provider', type: 'string', jsonPath: '.spec.provider' },
      { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
      { name: 'Weight', type: 'number', jsonPath: '.spec.weight' },
      READY,
      AGE,
    ],
  },
  Tenant: {
    plural: 'tenants',
    shortNames: ['gtenant'],
    description:
      'Tenant is a customer of the gateway: its model permissions, wallet, cache, guardrail, ' +
      'compression and routing settings.',
    columns: [
      { name: 'Tier', type: 'string', jsonPath: '.spec.tier' },
      {
        name: 'Wallet',
        type: 'number',
        jsonPath: '.status.walletBalanceUsd',
        description: 'Current wallet balance in USD',
      },
      READY,
      AGE,
    ],
  },
  ApiKey: {
    plural: 'apikeys',
    shortNames: ['gkey'],
    description:
      'ApiKey is a credential of a tenant with its budget, auto-recharge, model restriction, ' +
      'rate limit and role. The key itself lives only in a Secret or as a SHA-256 hash.',
    columns: [
      { name: 'Tenant', type: 'string', jsonPath: '.spec.tenantRef.name' },
      {
        name: 'Budget',
        type: 'number',
        jsonPath: '.spec.budget.limitUsd',
        description: 'Budget limit in USD',
      },
      {
        name: 'Spend',
        type: 'number',
        jsonPath: '.status.spendUsd',
        description: 'Spend in the period in USD',
      },
      {
        name: 'Remaining',
        type: 'number',
        jsonPath: '.status.remainingUsd',
        description: 'Budget left in the period in USD',
      },
      { name: 'Role', type: 'string', jsonPath: '.spec.role' },
      READY,
      AGE,
    ],
  },
  GuardrailPolicy: {
    plural: 'guardrailpolicies',
    shortNames: ['gpolicy'],
    description:
      'GuardrailPolicy sets the action and threshold of each guardrail check (prompt injection, ' +
      'toxicity, PII, secrets) for the tenants that reference it.',
    columns: [READY, AGE],
  },
  CachePolicy: {
    plural: 'cachepolicies',
    shortNames: ['gcache'],
    description:
      'CachePolicy tunes the semantic cache: score weights, band thresholds, models, TTL and the ' +
      'savings share credited per tier.',
    columns: [READY, AGE],
  },
};

/** The CRD of one kind; a fresh object on every call. */
export function renderCrd(kind: KindName): CustomResourceDefinition {
  const info = KIND_INFO[kind];
  const schema: OpenApiSchema = { description: info.description, ...toOpenApiV3(Kinds[kind]) };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${info.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'gantry' },
    },
    spec: {
      group: GROUP,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: info.plural,
        singular: kind.toLowerCase(),
        shortNames: [...info.shortNames],
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: { status: {} },
          additionalPrinterColumns: info.columns.map((column) => ({ ...column })),
        },
      ],
    },
  };
}

/** Every CRD, in the order of `Kinds`. */
export function renderCrds(): CustomResourceDefinition[] {
  return (Object.keys(Kinds) as KindName[]).map(renderCrd);
}

export const GENERATED_HEADER =
  '# Generated from crds/src/schemas.ts by `npm run crds:generate`. Do not edit by hand.\n';

/** The file name and exact text of each generated CRD file. */
export function renderCrdFiles(): { fileName: string; content: string }[] {
  return renderCrds().map((crd) => ({
    fileName: `${crd.metadata.name}.yaml`,
    // No line folding and no anchors, so a diff shows exactly the field that changed.
    content: GENERATED_HEADER + stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false }),
  }));
}

/** The value that switches the chart's CRD templates off (a second release, or CRDs managed elsewhere). */
export const CHART_CRDS_VALUE = '.Values.crds.install';

/**
 * Deleting a CRD deletes every object of its kind in the cluster, so neither `helm uninstall`
 * (resource-policy) nor Argo CD (which ignores Helm's annotations) may delete the chart's CRDs.
 */
export const CHART_CRD_ANNOTATIONS = {
  'helm.sh/resource-policy': 'keep',
  'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false',
};

/**
 * The CRDs as Helm templates under charts/gantry/templates/crds/. Helm installs a chart's
 * `crds/` folder once and never upgrades it, so the chart carries them as templates instead.
 */
export function renderChartCrdFiles(): { fileName: string; content: string }[] {
  return renderCrds().map((crd) => {
    const kept = {
      ...crd,
      metadata: { ...crd.metadata, annotations: { ...CHART_CRD_ANNOTATIONS } },
    };
    const body = stringify(kept, { lineWidth: 0, aliasDuplicateObjects: false });
    return {
      fileName: `${crd.metadata.name}.yaml`,
      content: `${GENERATED_HEADER}{{- if ${CHART_CRDS_VALUE} }}\n${body}{{- end }}\n`,
    };
  });
}
