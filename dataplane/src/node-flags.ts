/**
 * The Node flags the data plane runs with. `npm start` (scripts/start.sh), the image's
 * ENTRYPOINT, the chart's container command and the bench's Gantry child each spell them out
 * (a shell script, a Dockerfile and a Helm template cannot import this); node-flags.test.ts
 * fails when one of them differs from this list, so a flag is changed here and there together.
 *
 * - `--enable-source-maps`: stack traces name the TypeScript lines of the bundle.
 * - `--max-semi-space-size=4`: a 4 MB young generation (V8's default grows it to 16 MB),
 *   less RSS for a little more scavenging; docs/decisions.md (issue 15) has the measurements.
 * - `--no-allocation-site-pretenuring`: V8 otherwise allocates the objects of a site it saw
 *   surviving scavenges straight in old space. In about half the processes a per-request site
 *   got there, and old space then took 13-20 KB per stream instead of 3-5 (the old objects keep
 *   what they point to alive until the next full GC), enough for V8 to grow the heap 4x before
 *   marking. No measurable CPU cost; docs/decisions.md (issue 15) has the measurements.
 */
export const NODE_FLAGS: readonly string[] = [
  '--enable-source-maps',
  '--max-semi-space-size=4',
  '--no-allocation-site-pretenuring',
];
