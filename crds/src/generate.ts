/**
 * Script, not a module: `npm run crds:generate`: writes one YAML file per CRD into crds/generated/ (plain,
 * for `kubectl apply`) and into the Helm chart's templates/crds/ (as templates, so they upgrade with the
 * chart), and removes generated files of kinds that no longer exist.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUP } from './schemas.ts';
import { renderChartCrdFiles, renderCrdFiles, renderCrds } from './render.ts';
import { structuralProblems } from './structural.ts';

const OUTPUTS = [
  { dir: fileURLToPath(new URL('../generated/', import.meta.url)), files: renderCrdFiles },
  {
    dir: fileURLToPath(new URL('../../charts/gantry/templates/crds/', import.meta.url)),
    files: renderChartCrdFiles,
  },
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
  for (const output of OUTPUTS) {
    const files = output.files();
    const wanted = new Set(files.map((file) => file.fileName));
    mkdirSync(output.dir, { recursive: true });
    for (const name of readdirSync(output.dir)) {
      if (isGeneratedFile(name) && !wanted.has(name)) rmSync(join(output.dir, name));
    }
    for (const file of files) writeFileSync(join(output.dir, file.fileName), file.content);
    console.log(`wrote ${files.length} CRDs to ${output.dir}`);
  }
}

main();
