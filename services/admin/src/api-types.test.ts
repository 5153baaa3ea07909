// The admin API's types entry and its client, the web UI (docs/ui.md "API types"): rules a review would otherwise
// have to remember, held by a test as packages/shared/src/entry-points.test.ts holds the entry points.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const adminDir = dirname(dirname(fileURLToPath(import.meta.url)));
const root = join(adminDir, '..', '..');
const entry = join(adminDir, 'src', 'api-types.ts');
const uiApp = join(root, 'packages', 'ui', 'app');

/**
 * Packages the entry's types may reach, each for a reason. The UI's typecheck reads every file the entry reaches
 * (type imports included), under the UI's compiler options (DOM, no Node types of its own): an SDK or a server
 * reached here is hundreds of files checked against the browser's types, and a way for the UI to depend on them.
 */
const REACHABLE = new Set([
  // The schemas request bodies are inferred from.
  'zod',
  // Node's types: @gw/shared's files import Node modules (their code never reaches the bundle: type imports).
  '@types/node',
  'undici-types',
  // The types of @gw/shared's main entry (the config file, logger, metrics, store), where its schemas are.
  'yaml',
  'pino',
  'pino-std-serializers',
  'sonic-boom',
  'thread-stream',
  'prom-client',
  'ioredis',
  'denque',
]);

/** The package a `node_modules` file belongs to (`@scope/name` or `name`), from pnpm's store layout. */
function packageOf(file: string): string | undefined {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(file);
  return match?.[1];
}

describe('@gw/admin/api-types', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gw-api-types-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('is types only: importing it loads no other module, so nothing of it reaches the bundle', () => {
    const probe = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({
        load(url, context, nextLoad) {
          loaded.push(url);
          return nextLoad(url, context);
        },
      });
      await import('@gw/admin/api-types');
      process.stdout.write(JSON.stringify(loaded));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '--eval', probe], {
      cwd: adminDir,
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual([pathToFileURL(entry).href]);
  });

  it('typechecks under the UI compiler options alone, reaching no SDK, server or client package', () => {
    // The UI's own options, without its files and without the types its build config brings (vite's, Node's).
    const config = join(scratch, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        extends: join(root, 'packages', 'ui', 'tsconfig.json'),
        compilerOptions: { types: [] },
        files: [entry],
        include: [],
      }),
    );
    let output: string;
    try {
      output = execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', config, '--listFiles'], {
        encoding: 'utf8',
      });
    } catch (error) {
      const { stdout } = error as { stdout: string };
      throw new Error(`the entry does not typecheck under the UI's options:\n${stdout.split('\n/')[0]}`);
    }
    const reached = new Set(
      output
        .split('\n')
        .filter((file) => file.includes('/node_modules/') && !file.includes('/typescript'))
        .map(packageOf),
    );
    // A package here: import the type from the file that declares it, not from a package's main entry.
    expect([...reached].filter((name) => name !== undefined && !REACHABLE.has(name))).toEqual([]);
  }, 120_000);
});

/** Every name the entry exports (its `export type { … }` lists, aliases and interfaces). */
function exportedNames(): Set<string> {
  const text = readFileSync(entry, 'utf8');
  const names = new Set<string>();
  for (const [, list] of text.matchAll(/export type \{([^}]*)\}/g))
    for (const name of list!.split(','))
      if (name.trim())
        names.add(
          name
            .trim()
            .split(/\s+as\s+/)
            .at(-1)!,
        );
  for (const [, name] of text.matchAll(/export (?:type|interface) (\w+)/g)) names.add(name!);
  return names;
}

/** The names a UI file imports from the entry. */
function importedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, list] of text.matchAll(/import type \{([^}]*)\} from '@gw\/admin\/api-types'/g))
    for (const name of list!.split(',')) if (name.trim()) names.add(name.trim());
  return names;
}

/** The type parameters a file declares (`function f<Item extends X, Created = Item>`): a generic helper's own. */
function typeParameters(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, list] of text.matchAll(/(?:function|interface) \w+<([^>(]+)>/g))
    for (const parameter of list!.split(',')) names.add(parameter.trim().split(/\s/)[0]!);
  return names;
}

/** TypeScript's own generics, with which a type is built from the entry's without writing a field. */
const BUILT_IN = ['Array', 'Pick', 'Omit', 'Partial', 'Required', 'Readonly', 'NonNullable'];

/** The identifiers of a type's text, its string literals (`Pick<X, 'id'>`'s 'id') left out. */
const identifiersOf = (typeText: string) =>
  [...typeText.replace(/'[^']*'/g, '').matchAll(/[A-Za-z_]\w*/g)].map(([word]) => word);

/** Whether a type's text is made of these names only: no field written (`{ id: string }`), no other type. */
const builtFrom = (typeText: string, names: Set<string>) =>
  !/[{:]/.test(typeText.replace(/'[^']*'/g, '')) && identifiersOf(typeText).every((word) => names.has(word));

/**
 * The names a UI file may give an API call: the entry's types it imports, the type parameters of a generic helper,
 * and its own aliases built from those alone (`type Owner = Team | Customer`).
 */
function answerTypes(text: string): Set<string> {
  const names = new Set([...importedNames(text), ...typeParameters(text), ...BUILT_IN]);
  for (const [, alias, definition] of text.matchAll(/^type (\w+) = ([^;]+);/gm))
    if (builtFrom(definition!, names)) names.add(alias!);
  return names;
}

/** The type arguments of a call: `<…>` after the name, angle brackets balanced. */
function typeArguments(text: string, start: number): string {
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    if (text[index] === '<') depth++;
    else if (text[index] === '>' && text[index - 1] !== '=' && --depth === 0)
      return text.slice(start + 1, index);
  }
  return text.slice(start);
}

describe('the web UI (packages/ui/app)', () => {
  const files = readdirSync(uiApp, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => ({ name, text: readFileSync(join(uiApp, name), 'utf8') }));

  it('is read (the scan below sees its files)', () => {
    expect(files.map((file) => file.name)).toContain(join('pages', 'providers.tsx'));
  });

  // A copy of an API type in the UI usually keeps its name: declaring it is the first sign.
  it('declares none of the API types itself', () => {
    const exported = exportedNames();
    const copies = files.flatMap(({ name, text }) =>
      [...text.matchAll(/^(?:export )?(?:interface|type) (\w+)/gm)]
        .filter(([, declared]) => exported.has(declared!))
        .map(([, declared]) => `${name}: ${declared}`),
    );
    expect(copies).toEqual([]);
  });

  // A renamed copy, or an answer's shape written inline (`useApiQuery<{ id: string; name: string }[]>`), is still
  // given to the calls that read the API: what they answer must be named by the entry's types and nothing else.
  it("types every API call's answer with the entry's types", () => {
    const CALL = /(?<!function )\b(api|useApiQuery|useApiMutation)<|<(CrudSection)</g;
    const offences = files.flatMap(({ name, text }) => {
      const allowed = answerTypes(text);
      return [...text.matchAll(CALL)]
        .map((match) => ({
          call: match[1] ?? match[2],
          types: typeArguments(text, match.index + match[0].length - 1),
        }))
        .filter(({ types }) => !builtFrom(types, allowed))
        .map(({ call, types }) => `${name}: ${call}<${types}>`);
    });
    expect(offences).toEqual([]);
  });

  it('never casts through unknown (`as unknown as`): a generic that needs it is typed instead', () => {
    const casts = files.filter(({ text }) => text.includes('as unknown as')).map(({ name }) => name);
    expect(casts).toEqual([]);
  });

  it('imports the entry with `import type` only, so no code of the server is bundled', () => {
    const runtime = files
      .filter(({ text }) => /import (?!type )[^;]*from '@gw\/admin/.test(text))
      .map(({ name }) => name);
    expect(runtime).toEqual([]);
  });
});
