/**
 * Script, not a module: `npm run crds:generate`: writes one YAML file per CRD into crds/generated/ and into the
 * Helm chart's crds/ folder, and removes generated files of kinds that no longer exist.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUP } from './schemas.ts';
import { renderCrdFiles, renderCrds } from './render.ts';
import { structuralProblems } from './structural.ts';

const OUTPUT_DIRS = [
  fileURLToPath(new URL('../generated/', import.meta.url)),
  fileURLToPath(new URL('../../charts/gantry/crds/', import.meta.url)),
];

/** Files this generator owns in an output folder. */
const isGeneratedFile = (name: string) => name.endsWith(`.${GROUP}.yaml`);

function main(): void {
  for (const crd of renderCrds()) {
    const problems = structuralProblems(crd.spec.versions[0]?.schema.openAPIV3Schema);
    if (problems.length > 0) {
      throw new Error(`${crd.metadata.name} is not structural:\n  ${problems.join('\n  ')}`);
    }
  }
  const files = renderCrdFiles();
  const wanted = new Set(files.map((file) => file.fileName));
  for (const dir of OUTPUT_DIRS) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      if (isGeneratedFile(name) && !wanted.has(name)) rmSync(join(dir, name));
    }
    for (const file of files) writeFileSync(join(dir, file.fileName), file.content);
    console.log(`wrote ${files.length} CRDs to ${dir}`);
  }
}

main();
