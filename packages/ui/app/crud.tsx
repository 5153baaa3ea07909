// A collection of the admin API as one page: a table, create and edit with the JSON form, delete; buttons
// only for roles holding the write permission.
import type { Permission } from '@gw/admin/api-types';
import { type ReactNode, useState } from 'react';
import { api } from './api.ts';
import { useAuth } from './auth.tsx';
import {
  type Column,
  FormTabs,
  JsonForm,
  OnceValue,
  QueryView,
  Table,
  useApiMutation,
  useApiQuery,
} from './ui.tsx';

/** What a collection's resources are named by in their paths: an id, or else a name (providers, MCP clients). */
type Identified = { id: string } | { name: string };

const identify = (item: Identified) => ('id' in item ? item.id : item.name);

/**
 * `Item` is what the list answers an array of (the API's type of the resource), `Created` what a create answers
 * (the resource, unless the collection answers more: a token's value).
 */
export interface CrudProps<Item extends Identified, Created = Item> {
  title: string;
  /** `GET` lists, `POST` creates. */
  listPath: string;
  /** The item's path (GET, PATCH or PUT, DELETE). */
  itemPath: (id: string) => string;
  idOf?: (item: Item) => string;
  columns: Column<Item>[];
  writePermission: Permission;
  /** The JSON form's start for a create: a body the API takes (checked against its `…Input` type where written). */
  createTemplate?: object;
  /** How edits are sent; false: no edit. */
  editMethod?: 'PATCH' | 'PUT' | false;
  /** What an edit form starts from. */
  editBody?: (item: Item) => unknown;
  /** A value in the create answer to show once (a token's). */
  onceValue?: (answer: Created) => string | undefined;
  rowActions?: (item: Item) => ReactNode;
  /** Whether the API lets this item be changed at all (a built-in role is not): no Edit or Delete otherwise. */
  changeable?: (item: Item) => boolean;
  /**
   * A form for the frequent fields, beside the JSON one ("Advanced"): it sends what `submit` takes (the create
   * body, or the edit's); `item` is absent when creating.
   */
  form?: (props: { item?: Item; submit: (body: unknown) => Promise<void>; cancel: () => void }) => ReactNode;
  /** What the list shows when it is empty (a first step, a hint). */
  empty?: ReactNode;
}

/** The section's form: the JSON one alone, or the page's own form with the JSON one as the advanced tab. */
function Editor<Item extends Identified>(props: {
  label: string;
  submit: string;
  initial: unknown;
  item?: Item | undefined;
  form: CrudProps<Item>['form'];
  onSubmit: (body: unknown) => Promise<void>;
  onCancel: () => void;
}) {
  const json = (
    <JsonForm
      label={props.label}
      submit={props.submit}
      initial={props.initial}
      onCancel={props.onCancel}
      onSubmit={props.onSubmit}
    />
  );
  if (!props.form) return json;
  return (
    <FormTabs
      label={props.label}
      json={json}
      form={props.form({
        ...(props.item && { item: props.item }),
        submit: props.onSubmit,
        cancel: props.onCancel,
      })}
    />
  );
}

export function CrudSection<Item extends Identified, Created = Item>(props: CrudProps<Item, Created>) {
  const { can } = useAuth();
  const writable = can(props.writePermission);
  const idOf = props.idOf ?? identify;
  const list = useApiQuery<Item[]>(props.listPath);
  const [mode, setMode] = useState<{ kind: 'create' } | { kind: 'edit'; item: Item } | undefined>();
  const [once, setOnce] = useState<string>();
  const invalidate = [props.listPath.split('/').slice(0, 3).join('/')];
  const create = useApiMutation(
    (body: unknown) => api<Created>(props.listPath, { method: 'POST', body }),
    invalidate,
  );
  const edit = useApiMutation(
    ({ id, body }: { id: string; body: unknown }) =>
      api(props.itemPath(id), { method: props.editMethod || 'PATCH', body }),
    invalidate,
  );
  const remove = useApiMutation((id: string) => api(props.itemPath(id), { method: 'DELETE' }), invalidate);
  const columns: Column<Item>[] = [
    ...props.columns,
    ...(writable || props.rowActions
      ? [
          {
            header: 'Actions',
            cell: (item: Item) => (
              <div className="actions">
                {props.rowActions?.(item)}
                {writable && (props.changeable?.(item) ?? true) && props.editMethod !== false && (
                  <button type="button" className="secondary" onClick={() => setMode({ kind: 'edit', item })}>
                    Edit<span className="sr-only"> {idOf(item)}</span>
                  </button>
                )}
                {writable && (props.changeable?.(item) ?? true) && (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => {
                      if (confirm(`Delete ${idOf(item)}?`)) remove.mutate(idOf(item));
                    }}
                  >
                    Delete<span className="sr-only"> {idOf(item)}</span>
                  </button>
                )}
              </div>
            ),
          },
        ]
      : []),
  ];
  return (
    <section aria-labelledby={`${props.title}-heading`}>
      <div className="section-header">
        <h2 id={`${props.title}-heading`}>{props.title}</h2>
        {writable && props.createTemplate && (
          <button type="button" onClick={() => setMode({ kind: 'create' })}>
            Add<span className="sr-only"> to {props.title}</span>
          </button>
        )}
      </div>
      {once && <OnceValue label="The new value" value={once} onDone={() => setOnce(undefined)} />}
      {mode?.kind === 'create' && (
        <Editor
          label={`New in ${props.title}`}
          submit="Create"
          initial={props.createTemplate}
          form={props.form}
          onCancel={() => setMode(undefined)}
          onSubmit={async (body) => {
            const answer = await create.mutateAsync(body);
            setOnce(props.onceValue?.(answer));
            setMode(undefined);
          }}
        />
      )}
      {mode?.kind === 'edit' && (
        <Editor
          label={`Edit ${idOf(mode.item)}`}
          submit="Save"
          initial={props.editBody ? props.editBody(mode.item) : mode.item}
          item={mode.item}
          form={props.form}
          onCancel={() => setMode(undefined)}
          onSubmit={async (body) => {
            await edit.mutateAsync({ id: idOf(mode.item), body });
            setMode(undefined);
          }}
        />
      )}
      {remove.error && (
        <p className="error" role="alert">
          {remove.error.message}
        </p>
      )}
      <QueryView query={list}>
        {(body) => (
          <Table
            caption={props.title}
            rows={body}
            columns={columns}
            rowKey={idOf}
            empty={props.empty ?? `Nothing in ${props.title} yet.`}
          />
        )}
      </QueryView>
    </section>
  );
}
