import { invalidRequest, notFound } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import type { ManageRequest, ManageResult } from './governance-messages.ts';
import type { GovernanceRepository } from './governance-repository.ts';
import { COLLECTIONS, type OwnerCollection, type StoredOf } from './resources.ts';
import { usageReport } from './usage-report.ts';

/**
 * The admin API's management of governance resources (`/api/governance/{collection}[/{id}[/usage|/rotate]]`):
 * one answer per action; an unknown collection or id is not_found.
 */
export async function manageResources(
  options: { repository: GovernanceRepository; store: Store; now: () => number },
  request: ManageRequest,
): Promise<ManageResult> {
  const { repository } = options;
  const collection = COLLECTIONS.find((name) => name === request.collection);
  if (!collection) throw notFound(`governance resource '${request.collection}'`);
  const existing = (id: string) => {
    const resource = repository.get(collection, id);
    if (!resource) throw notFound(`${collection} '${id}'`);
    return resource;
  };
  switch (request.action) {
    case 'list':
      return repository.list(collection).map((resource) => repository.view(resource));
    case 'get':
      return repository.view(existing(request.id));
    case 'create':
      return repository.create(collection, request.body);
    case 'update':
      return repository.update(collection, request.id, request.body);
    case 'delete':
      await repository.delete(collection, request.id);
      return { deleted: request.id };
    case 'rotate':
      if (collection !== 'virtual-keys') throw invalidRequest('only virtual keys can be rotated');
      return repository.rotate(request.id);
    case 'usage':
      if (collection === 'model-aliases') throw invalidRequest('model aliases have no budgets or limits');
      return usageReport({
        store: options.store,
        collection,
        resource: existing(request.id) as StoredOf<OwnerCollection>,
        now: options.now(),
      });
  }
}
