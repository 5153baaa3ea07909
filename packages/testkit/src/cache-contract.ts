import { afterEach, describe, it } from 'vitest';
import { type CacheBackend, SemanticCache } from '../../cache/src/index.ts';
import { answerCases } from './cache-contract-answer-cases.ts';
import type { CaseContext } from './cache-contract-helpers.ts';
import { lifecycleCases } from './cache-contract-lifecycle-cases.ts';
import { matchCases } from './cache-contract-match-cases.ts';

/** What a contract case asks of a backend. */
export interface CacheBackendSettings {
  /** The clock of the case: backends treat entries past `expiresAt` by it as gone. */
  now: () => number;
  maxEntriesPerScope: number;
}

export interface CacheContractOptions {
  /** Names the implementation in the test titles. */
  name: string;
  /**
   * Opens a backend over the state shared by the whole run (one Redis prefix): a second call gives another
   * replica, which sees what the first wrote.
   */
  create: (settings: CacheBackendSettings) => Promise<CacheBackend>;
  /** Case name → why this implementation does not run it. */
  skip?: Record<string, string>;
}

/**
 * The behaviour every cache backend owes the pipeline, asserted through SemanticCache. Cases use fresh
 * scopes, since the backends of one run share their state.
 */
export function runCacheContract(options: CacheContractOptions): void {
  const skip = options.skip ?? {};

  describe(`Cache contract: ${options.name}`, () => {
    const opened: CacheBackend[] = [];
    let clock = Date.now();
    const now = () => clock;
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((backend) => backend.close()));
      clock = Date.now();
    });

    const caseNames = new Set<string>();
    const context: CaseContext = {
      contractCase(name, body) {
        caseNames.add(name);
        const reason = skip[name];
        if (reason === undefined) it(name, body);
        else it.skip(`${name} (skipped: ${reason})`, body);
      },
      async open(maxEntriesPerScope = 100) {
        const backend = await options.create({ now, maxEntriesPerScope });
        opened.push(backend);
        return new SemanticCache({ backend, now });
      },
      advance(ms) {
        clock += ms;
      },
    };
    matchCases(context);
    lifecycleCases(context);
    answerCases(context);

    const unknownSkips = Object.keys(skip).filter((name) => !caseNames.has(name));
    if (unknownSkips.length > 0) {
      throw new Error(`runCacheContract(${options.name}): no case is named ${unknownSkips.join(', ')}`);
    }
  });
}
