/**
 * A Fastify scope that also parses multipart/form-data, for the media routes that take
 * uploads. The rest of the app keeps accepting JSON only.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';

/** OpenAI's own ceiling on audio uploads; SPEC.md puts images around 20 MB. */
export const DEFAULT_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

export interface MediaLimits {
  /** Largest accepted uploaded file (GANTRY_MAX_UPLOAD_BYTES). */
  maxUploadBytes: number;
}

export function mediaLimits(maxUploadBytes: number | undefined): MediaLimits {
  return { maxUploadBytes: maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES };
}

export function withMultipart(
  app: FastifyInstance,
  limits: MediaLimits,
  routes: (scope: FastifyInstance) => void,
): void {
  void app.register(async (scope) => {
    await scope.register(multipart, {
      limits: {
        fileSize: limits.maxUploadBytes,
        files: 4,
        fields: 32,
        // Prompts are the longest text fields (gpt-image takes 32,000 characters).
        fieldSize: 64 * 1024,
        parts: 40,
      },
    });
    routes(scope);
  });
}
