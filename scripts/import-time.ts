// Import time of each service's main: the main's import declarations alone (no servers, no connections),
// in a fresh Node process, median of several runs. `node scripts/import-time.ts [runs]`.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.argv[2] ?? 7);
const mains = ['ingress', 'router', 'governance', 'mcp-runner', 'admin'].map((service) => ({
  service,
  path: join(root, 'services', service, 'src', 'main.ts'),
}));
mains.push({ service: 'embedded', path: join(root, 'src', 'embedded.ts') });

/** The import declarations of a module, as one module that only imports. */
function importsOnly(source: string): string {
  const declarations = source.match(/^import\s[\s\S]*?from\s+['"][^'"]+['"];?$/gm) ?? [];
  return declarations.map((declaration) => declaration.replace(/^import\s+type\s/, '// ')).join('\n');
}

function timeOnce(file: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, [file], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`${file}: ${result.stderr.toString().slice(0, 400)}`);
  return performance.now() - started;
}

const baseline = join(root, 'scripts', '.import-time-empty.ts');
writeFileSync(baseline, '');
const median = (values: number[]) =>
  values.sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
const empty = median(Array.from({ length: runs }, () => timeOnce(baseline)));
rmSync(baseline);
for (const { service, path } of mains) {
  const probe = join(dirname(path), '.import-time-probe.ts');
  writeFileSync(probe, importsOnly(readFileSync(path, 'utf8')));
  try {
    const times = Array.from({ length: runs }, () => timeOnce(probe));
    console.log(`${service.padEnd(12)} ${(median(times) - empty).toFixed(0).padStart(5)} ms`);
  } finally {
    rmSync(probe);
  }
}
