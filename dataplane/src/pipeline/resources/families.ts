/**
 * The resource families OpenAI's API keeps upstream, as one table: which capability a
 * deployment needs to hold them, where they live under the base URL, and how errors name
 * them. Everything else (ownership, selection, proxying) is shared.
 */
import type { Capability } from '@gantry/crds';
import type { UsageEndpoint } from '../../accounting/usage.ts';
import type { Family } from '../../stores/ownership/types.ts';

export interface FamilySpec {
  family: Family;
  capability: Capability;
  endpoint: UsageEndpoint;
  /** Path segment under /v1 (public) and under the deployment's base URL (upstream). */
  path: string;
  /** For messages: "file file-abc not found". */
  noun: string;
  /** The path parameter errors name. */
  param: string;
  /** Extra headers the upstream wants for this family. */
  upstreamHeaders?: Readonly<Record<string, string>>;
}

export const FAMILY: Readonly<Record<Family, FamilySpec>> = {
  file: {
    family: 'file',
    capability: 'files',
    endpoint: 'files',
    path: 'files',
    noun: 'file',
    param: 'file_id',
  },
  batch: {
    family: 'batch',
    capability: 'batches',
    endpoint: 'batches',
    path: 'batches',
    noun: 'batch',
    param: 'batch_id',
  },
  vector_store: {
    family: 'vector_store',
    capability: 'vector_stores',
    endpoint: 'vector_stores',
    path: 'vector_stores',
    noun: 'vector store',
    param: 'vector_store_id',
  },
  assistant: {
    family: 'assistant',
    capability: 'assistants',
    endpoint: 'assistants',
    path: 'assistants',
    noun: 'assistant',
    param: 'assistant_id',
    // OpenAI serves the Assistants API only to callers that opt into its v2 beta.
    upstreamHeaders: { 'openai-beta': 'assistants=v2' },
  },
  container: {
    family: 'container',
    capability: 'containers',
    endpoint: 'containers',
    path: 'containers',
    noun: 'container',
    param: 'container_id',
  },
  // Only budgeted jobs' worst cases are recorded (fine-tuning/run.ts): jobs are found through
  // their id and metadata, never through this table's generic routes.
  fine_tuning_job: {
    family: 'fine_tuning_job',
    capability: 'fine_tuning',
    endpoint: 'fine_tuning',
    path: 'fine_tuning/jobs',
    noun: 'fine-tuning job',
    param: 'fine_tuning_job_id',
  },
};

/** OpenAI's upload purposes (`batch_output`, `assistants_output`… are written by OpenAI only). */
export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
