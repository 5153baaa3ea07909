import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));

/** Every module a fresh Node process resolves while importing `entry`, ES modules and `require` calls alike. */
function modulesLoadedBy(entry: string): string[] {
  const probe = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({
      resolve(specifier, context, nextResolve) {
        const resolved = nextResolve(specifier, context);
        loaded.push(resolved.url);
        return resolved;
      },
    });
    await import(${JSON.stringify(entry)});
    process.stdout.write(JSON.stringify(loaded));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '--eval', probe], {
    cwd: packageDir,
    encoding: 'utf8',
  });
  return JSON.parse(output) as string[];
}

const fromPackage = (name: string) => (url: string) => url.includes(`/node_modules/${name}/`);

describe('@gw/shared entry points', () => {
  it('the main entry loads neither a Redis client nor gRPC', () => {
    const loaded = modulesLoadedBy('@gw/shared');
    expect(loaded.some((url) => url.endsWith('/packages/shared/src/index.ts'))).toBe(true);
    expect(loaded.filter(fromPackage('ioredis'))).toEqual([]);
    expect(loaded.filter(fromPackage('@grpc/grpc-js'))).toEqual([]);
  });

  it('the store and gRPC entries do load them, so the probe sees what an import pulls in', () => {
    expect(modulesLoadedBy('@gw/shared/store').some(fromPackage('ioredis'))).toBe(true);
    expect(modulesLoadedBy('@gw/shared/grpc').some(fromPackage('@grpc/grpc-js'))).toBe(true);
  });
});
