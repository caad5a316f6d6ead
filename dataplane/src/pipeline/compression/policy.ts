/**
 * The tenant's compression settings with Gantry's defaults, and the choice of extraction
 * model when the tenant names none. Pure: the shell hands in what the snapshot knows.
 */
import type { TenantSpec } from '@gantry/crds';

/** Below this many prompt tokens a conversation passes through (SPEC leaves the default open). */
export const DEFAULT_THRESHOLD_TOKENS = 8000;
/** Assistant steps kept verbatim in the Recent zone. */
export const DEFAULT_STEP_WINDOW = 4;

export interface CompressionPolicy {
  enabled: boolean;
  thresholdTokens: number;
  stepWindow: number;
  /** The model the tenant named, if any; else `chooseExtractionModel` picks. */
  extractionModel: string | undefined;
}

/** On unless the manifest turns it off: SPEC.md wants it with no client configuration. */
export function resolveCompressionPolicy(spec: Pick<TenantSpec, 'compression'>): CompressionPolicy {
  const c = spec.compression;
  return {
    enabled: c?.enabled ?? true,
    thresholdTokens: c?.thresholdTokens ?? DEFAULT_THRESHOLD_TOKENS,
    stepWindow: c?.stepWindow ?? DEFAULT_STEP_WINDOW,
    extractionModel:
      c?.extractionModel !== undefined && c.extractionModel !== '' ? c.extractionModel : undefined,
  };
}

export interface ModelOption {
  model: string;
  /** The tenant may use it and it has a chat deployment. */
  usable: boolean;
  /** USD per million input + output tokens at its dearest deployment; undefined when unpriced. */
  pricePerMillion: number | undefined;
}

/**
 * The named model when it is usable (a named model that is not usable is `no_model`: Gantry
 * does not silently substitute another). Otherwise the cheapest priced usable chat model,
 * ties by name; with no priced model, the requested one (it is what the caller pays for anyway).
 */
export function chooseExtractionModel(
  configured: string | undefined,
  options: readonly ModelOption[],
  requested: string,
): string | undefined {
  if (configured !== undefined)
    return options.some((o) => o.model === configured && o.usable) ? configured : undefined;
  let best: ModelOption | undefined;
  for (const o of options) {
    if (!o.usable || o.pricePerMillion === undefined) continue;
    if (
      !best ||
      o.pricePerMillion < (best.pricePerMillion ?? Infinity) ||
      (o.pricePerMillion === best.pricePerMillion && o.model < best.model)
    )
      best = o;
  }
  if (best) return best.model;
  return options.some((o) => o.model === requested && o.usable) ? requested : undefined;
}
