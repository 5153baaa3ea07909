import type { GovernanceService } from '@gw/governance';
import type { RouterService } from '@gw/router';
import { invalidRequest } from '@gw/shared';

type Alias = { id?: unknown; name?: unknown; targets?: unknown; fallbacks?: unknown };

const providerOf = (model: unknown) =>
  typeof model === 'string' && model.indexOf('/') > 0 ? model.slice(0, model.indexOf('/')) : undefined;

/**
 * A model alias written through the admin API must be one the router can follow: its name is no other alias's
 * (two aliases of one name would route by whichever is read first), and every target and fallback names a
 * configured provider (else requests route to a provider that answers nothing). The governance schema checks
 * the shape; this checks what only the admin, holding both the aliases and the router, can see.
 */
export async function checkModelAlias(
  services: { router: RouterService; governance: GovernanceService },
  write: { id?: string | undefined; body: Record<string, unknown>; patch: boolean },
): Promise<void> {
  const manage = services.governance.manage.bind(services.governance);
  const existing =
    write.patch && write.id
      ? ((await manage({ action: 'get', collection: 'model-aliases', id: write.id })) as Alias)
      : {};
  const alias: Alias = { ...existing, ...write.body };
  if (typeof alias.name === 'string') {
    const others = (await manage({ action: 'list', collection: 'model-aliases' })) as Alias[];
    const twin = others.find((other) => other.name === alias.name && other.id !== write.id);
    if (twin) {
      throw invalidRequest(
        `name: a model alias named '${alias.name}' already exists (${String(twin.id)}); change that one instead`,
        'name',
      );
    }
  }
  const providers = new Set(
    (await services.router.listProviders()).map((provider) => String(provider['name'])),
  );
  const models = [
    ...(Array.isArray(alias.targets) ? alias.targets : []).map((target, index) => ({
      field: `targets[${index}].model`,
      model: (target as { model?: unknown } | null)?.model,
    })),
    ...(Array.isArray(alias.fallbacks) ? alias.fallbacks : []).map((model, index) => ({
      field: `fallbacks[${index}]`,
      model,
    })),
  ];
  for (const { field, model } of models) {
    const provider = providerOf(model);
    if (provider === undefined || providers.has(provider)) continue;
    const known = [...providers].sort().join(', ') || 'none';
    throw invalidRequest(
      `${field}: provider '${provider}' does not exist (configured providers: ${known})`,
      field,
    );
  }
}
