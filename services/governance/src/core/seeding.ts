import type { GatewayConfig } from '@gw/shared';
import type { ResourceWrites } from './resource-writes.ts';
import type { Collection } from './resources.ts';

/** Resources of the config file, written at start (the file wins for the ids it lists). */
export async function seedGovernance(
  writes: ResourceWrites,
  governance: GatewayConfig['governance'],
): Promise<void> {
  const order: Array<[Collection, Array<{ id?: string | undefined }>]> = [
    ['business-units', governance.business_units],
    ['customers', governance.customers],
    ['teams', governance.teams],
    ['users', governance.users],
    ['model-aliases', governance.model_aliases],
  ];
  for (const [collection, items] of order) {
    for (const [index, item] of items.entries()) {
      const { id = `config-${collection}-${index}`, ...body } = item;
      await writes.writeFromConfig(collection, id, body);
    }
  }
  for (const [index, item] of governance.virtual_keys.entries()) {
    const { id = `config-vk-${index}`, value, ...body } = item;
    if (value !== undefined && !value.startsWith('sk-gw-'))
      throw new Error(`governance.virtual_keys[${index}].value: must start with sk-gw-`);
    await writes.writeFromConfig('virtual-keys', id, body, value);
  }
  // Last: a rule's scope may name any of the above.
  for (const [index, item] of governance.routing_rules.entries()) {
    const { id = `config-rule-${index}`, ...body } = item;
    await writes.writeFromConfig('routing-rules', id, body);
  }
}
