import { invalidRequest, notFound } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import type { ManageRequest, ManageResult, ManageResults } from './governance-messages.ts';
import type { GovernanceRepository } from './governance-repository.ts';
import type { ResourceWrites } from './resource-writes.ts';
import { COLLECTIONS, type OwnerCollection, type StoredOf } from './resources.ts';
import { usageReport } from './usage-report.ts';

/**
 * The admin API's management of governance resources (`/api/governance/{collection}[/{id}[/usage|/rotate]]`):
 * one answer per action; an unknown collection or id is not_found.
 */
export async function manageResources(
  options: {
    repository: GovernanceRepository;
    writes: ResourceWrites;
    store: Store;
    now: () => number;
    /** Routing rules' dry run (admission-core.ts). */
    dryRun: (body: unknown) => Promise<ManageResults['dry-run']>;
  },
  request: ManageRequest,
): Promise<ManageResult> {
  const { repository, writes } = options;
  const collection = COLLECTIONS.find((name) => name === request.collection);
  if (!collection) throw notFound(`governance resource '${request.collection}'`);
  // One resource is read from the store, not this replica's memory: a read right after a write through
  // another replica sees it (lists are this replica's memory, current within a change notice).
  const existing = (id: string) => repository.current(collection, id);
  switch (request.action) {
    case 'list':
      return repository.list(collection).map((resource) => repository.view(resource));
    case 'get':
      return repository.view(await existing(request.id));
    case 'create':
      return writes.create(collection, request.body);
    case 'update':
      return writes.replace(collection, request.id, request.body);
    case 'patch':
      return writes.patch(collection, request.id, request.body);
    case 'delete':
      return writes.delete(collection, request.id, { cascade: request.cascade ?? false });
    case 'rotate':
      if (collection !== 'virtual-keys') throw invalidRequest('only virtual keys can be rotated');
      return writes.rotate(request.id);
    case 'dry-run':
      if (collection !== 'routing-rules') throw invalidRequest('only routing rules have a dry run');
      return options.dryRun(request.body);
    case 'usage':
      if (collection === 'model-aliases' || collection === 'routing-rules')
        throw invalidRequest(`${collection} have no budgets or limits`);
      return usageReport({
        store: options.store,
        collection,
        resource: (await existing(request.id)) as StoredOf<OwnerCollection>,
        now: options.now(),
      });
  }
}
