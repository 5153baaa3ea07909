import type { BudgetUser, BusinessUnit, Customer, Team } from '@gw/admin/api-types';
import { useState } from 'react';
import { useAuth } from '../auth.tsx';
import { BudgetBar, BudgetForm, Usage } from '../budgets.tsx';
import { CrudSection } from '../crud.tsx';
import { display } from '../format.ts';
import { Field, Form, PageHeader } from '../ui.tsx';
import { MetadataRows, metadataBody, metadataPatch } from './metadata-fields.tsx';
import { useOwnerOptions } from './virtual-key-form.tsx';

const COLLECTIONS = [
  {
    id: 'teams',
    title: 'Teams',
    read: 'teams:read',
    write: 'teams:write',
    template: { name: 'platform', budgets: [] },
  },
  {
    id: 'customers',
    title: 'Customers',
    read: 'customers:read',
    write: 'customers:write',
    template: { name: 'acme', budgets: [] },
  },
  {
    id: 'business-units',
    title: 'Business units',
    read: 'customers:read',
    write: 'customers:write',
    template: { name: 'research', budgets: [] },
  },
  {
    id: 'users',
    title: 'Budget users',
    read: 'customers:read',
    write: 'customers:write',
    template: { name: 'Ada', email: 'ada@example.com', budgets: [] },
  },
] as const;

/** The variable a rule reads each collection's metadata under. */
const READS: Record<string, string> = {
  teams: 'team',
  customers: 'customer',
  'business-units': 'business_unit',
  users: 'user',
};

/** A resource of one of the collections: each owns budgets and limits. */
type Owner = Team | Customer | BusinessUnit | BudgetUser;

/**
 * An owner's name, the customer a team belongs to (picked by name), and the metadata routing rules read;
 * budgets have their own form.
 */
function OwnerForm(props: {
  collection: string;
  item?: Owner | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}) {
  const customers = useOwnerOptions('customers');
  const team = props.collection === 'teams';
  const person = props.collection === 'users';
  return (
    <Form
      label={props.item ? `Edit ${display(props.item.name)}` : 'New'}
      submit={props.item ? 'Save' : 'Create'}
      onCancel={props.cancel}
      onSubmit={(values) =>
        props.submit({
          name: values.name,
          ...(team && { customer_id: values.customer_id || (props.item ? null : undefined) }),
          ...(person && values.email && { email: values.email }),
          ...(props.item ? metadataPatch(values, props.item.metadata) : metadataBody(values)),
        })
      }
    >
      <Field label="Name" name="name" required defaultValue={props.item?.name} />
      {team && (
        <Field
          label="Customer"
          name="customer_id"
          options={[{ value: '', label: 'none' }, ...customers]}
          defaultValue={props.item && 'customer_id' in props.item ? props.item.customer_id : undefined}
        />
      )}
      {person && (
        <Field
          label="Email"
          name="email"
          type="email"
          defaultValue={props.item && 'email' in props.item ? props.item.email : undefined}
        />
      )}
      <MetadataRows current={props.item?.metadata} reads={READS[props.collection] ?? 'user'} />
    </Form>
  );
}

export default function Owners() {
  const { can } = useAuth();
  const [open, setOpen] = useState<{
    collection: string;
    item: Owner;
    what: 'usage' | 'budget';
  }>();
  const path = open && `/api/governance/${open.collection}/${encodeURIComponent(open.item.id)}`;
  return (
    <>
      <PageHeader title="Teams, customers, users and business units" />
      {open && path && (
        <section className="panel" aria-label={`${display(open.item.name)}`}>
          {open.what === 'usage' ? (
            <>
              <h2>Usage of {display(open.item.name)}</h2>
              <Usage path={path} />
              <button type="button" className="secondary" onClick={() => setOpen(undefined)}>
                Close
              </button>
            </>
          ) : (
            <BudgetForm
              path={path}
              budgets={open.item.budgets}
              invalidate={`/api/governance/${open.collection}`}
              onDone={() => setOpen(undefined)}
            />
          )}
        </section>
      )}
      {COLLECTIONS.filter((collection) => can(collection.read)).map((collection) => (
        <CrudSection<Owner>
          key={collection.id}
          title={collection.title}
          listPath={`/api/governance/${collection.id}`}
          itemPath={(id) => `/api/governance/${collection.id}/${encodeURIComponent(id)}`}
          writePermission={collection.write}
          editMethod="PATCH"
          createTemplate={collection.template}
          form={({ item, submit, cancel }) => (
            <OwnerForm collection={collection.id} item={item} submit={submit} cancel={cancel} />
          )}
          columns={[
            { header: 'Id', cell: (item) => display(item.id) },
            { header: 'Name', cell: (item) => display(item.name) },
            {
              header: 'Budgets',
              cell: (item) =>
                item.budgets?.length && can('budgets:read') ? (
                  <BudgetBar
                    path={`/api/governance/${collection.id}/${encodeURIComponent(String(item.id))}`}
                    label={display(item.name)}
                  />
                ) : (
                  (item.budgets ?? []).map((b) => `$${b.max_limit} / ${b.reset_duration}`).join(', ') || '—'
                ),
            },
          ]}
          rowActions={(item) => (
            <>
              {can('budgets:read') && (
                <button
                  type="button"
                  className="secondary"
                  onClick={() => setOpen({ collection: collection.id, item, what: 'usage' })}
                >
                  Usage<span className="sr-only"> of {display(item.name)}</span>
                </button>
              )}
              {can(collection.write) && (
                <button
                  type="button"
                  className="secondary"
                  onClick={() => setOpen({ collection: collection.id, item, what: 'budget' })}
                >
                  Budget<span className="sr-only"> of {display(item.name)}</span>
                </button>
              )}
            </>
          )}
        />
      ))}
    </>
  );
}
