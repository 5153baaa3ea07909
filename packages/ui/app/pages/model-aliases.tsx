// Model aliases: a name callers use, served by `<provider>/<model>` targets (the first picked by the alias's
// strategy, weighted by default) and fallbacks. The form
// checks what it can see before sending (a name another alias has, a provider that is not configured); the
// API refuses both anyway.
import type { ModelAlias, ModelAliasInput, ProviderView } from '@gw/admin/api-types';
import { CrudSection } from '../crud.tsx';
import { display } from '../format.ts';
import { Field, Form, listOf, useApiQuery } from '../ui.tsx';
import { objectiveOf, StrategyFields, strategyOf, strategyPatch } from './strategy-fields.tsx';

const COLLECTION = '/api/governance/model-aliases';

/** `openai/gpt-4o*3` is the target with weight 3; without `*` the weight is 1. */
function parseTargets(text: string | undefined) {
  return listOf(text).map((entry) => {
    const [model = '', weight] = entry.split('*');
    return { model: model.trim(), weight: weight === undefined ? 1 : Number(weight) };
  });
}

function AliasForm(props: {
  item?: ModelAlias | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}) {
  const providers = useApiQuery<ProviderView[]>('/api/providers');
  const aliases = useApiQuery<ModelAlias[]>(COLLECTION);
  const names = new Set((providers.data ?? []).map((provider) => provider.name));
  return (
    <Form
      label={props.item ? `Edit alias ${props.item.name}` : 'New model alias'}
      submit={props.item ? 'Save alias' : 'Create alias'}
      onCancel={props.cancel}
      fieldNames={{ model: 'targets' }}
      onSubmit={(values) => {
        const targets = parseTargets(values.targets);
        const fallbacks = listOf(values.fallbacks);
        const twin = (aliases.data ?? []).find(
          (alias) => alias.name === values.name && alias.id !== props.item?.id,
        );
        if (twin) throw new Error(`name: a model alias named '${values.name}' already exists (${twin.id})`);
        for (const [field, model] of [
          ...targets.map((target) => ['targets', target.model] as const),
          ...fallbacks.map((model) => ['fallbacks', model] as const),
        ]) {
          const provider = model.split('/')[0] ?? '';
          if (!model.includes('/')) throw new Error(`${field}: '${model}' must be <provider>/<model>`);
          if (providers.data && !names.has(provider))
            throw new Error(
              `${field}: provider '${provider}' does not exist (configured: ${[...names].join(', ') || 'none'})`,
            );
        }
        const strategy = strategyOf(values, 'strategy');
        const objective = objectiveOf(values);
        return props.submit({
          name: values.name,
          targets,
          fallbacks,
          // An edit is a merge patch: an emptied strategy or objective is removed.
          ...(props.item
            ? strategyPatch(values, { strategy: 'strategy', objective: 'objective' })
            : { ...(strategy && { strategy }), ...(objective && { objective }) }),
        });
      }}
    >
      <Field
        label="Alias name"
        name="name"
        required
        defaultValue={props.item?.name}
        placeholder="fast"
        hint="Exact, or a pattern with * (claude-*)."
      />
      <Field
        label="Targets"
        name="targets"
        required
        defaultValue={props.item?.targets
          ?.map((target) => `${target.model}*${target.weight ?? 1}`)
          .join(', ')}
        placeholder="openai/gpt-4o-mini*3, anthropic/claude-haiku-4-5*1"
        hint={`<provider>/<model>*weight, comma-separated. Providers: ${[...names].join(', ') || 'none yet'}.`}
      />
      <Field
        label="Fallbacks"
        name="fallbacks"
        defaultValue={props.item?.fallbacks?.join(', ')}
        hint="Tried in order when every target fails."
      />
      <StrategyFields
        name="strategy"
        strategy={props.item?.strategy}
        objective={props.item?.objective}
        unset="default (weighted)"
      />
    </Form>
  );
}

export function ModelAliases() {
  return (
    <CrudSection<ModelAlias>
      title="Model aliases"
      listPath={COLLECTION}
      itemPath={(id) => `${COLLECTION}/${encodeURIComponent(id)}`}
      writePermission="providers:write"
      editMethod="PATCH"
      createTemplate={
        {
          name: 'fast',
          targets: [{ model: 'openai/gpt-4o-mini', weight: 1 }],
          fallbacks: [],
        } satisfies ModelAliasInput
      }
      form={({ item, submit, cancel }) => <AliasForm item={item} submit={submit} cancel={cancel} />}
      columns={[
        { header: 'Name', cell: (item) => display(item.name) },
        {
          header: 'Targets',
          cell: (item) =>
            (item.targets ?? []).map((target) => `${target.model} (×${target.weight ?? 1})`).join(', '),
        },
        { header: 'Fallbacks', cell: (item) => (item.fallbacks ?? []).join(', ') || '—' },
        { header: 'Strategy', cell: (item) => item.strategy ?? 'weighted' },
      ]}
    />
  );
}
