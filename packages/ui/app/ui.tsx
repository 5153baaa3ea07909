// The UI's few building blocks: one table, one form pattern (labelled fields or a JSON editor), the loading,
// empty and error states, and the query/mutation hooks over api.ts.
import {
  type QueryKey,
  type UseQueryOptions,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import {
  createContext,
  type FormEvent,
  type ReactNode,
  useContext,
  useEffect,
  useId,
  useRef,
  useState,
} from 'react';
import { api } from './api.ts';

export function useApiQuery<T>(
  path: string | undefined,
  options: Partial<UseQueryOptions<T>> & { query?: Record<string, string | number | undefined> } = {},
) {
  const { query, ...rest } = options;
  return useQuery<T>({
    queryKey: [path, query] as QueryKey,
    queryFn: () => api<T>(path!, { query }),
    enabled: path !== undefined,
    ...rest,
  });
}

/** A change, then every query under `invalidate` is read again. */
export function useApiMutation<T = unknown, V = unknown>(
  run: (variables: V) => Promise<T>,
  invalidate: string[],
) {
  const client = useQueryClient();
  return useMutation<T, Error, V>({
    mutationFn: run,
    onSuccess: () =>
      Promise.all(
        invalidate.map((prefix) =>
          client.invalidateQueries({
            predicate: (q) => typeof q.queryKey[0] === 'string' && q.queryKey[0].startsWith(prefix),
          }),
        ),
      ),
  });
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {(error as Error).message}
    </p>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" aria-live="polite">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

export function Table<T>(props: {
  caption: string;
  rows: T[] | undefined;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty: ReactNode;
}) {
  if (!props.rows) return null;
  if (props.rows.length === 0) return <Empty>{props.empty}</Empty>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column.header} scope="col">
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)}>
              {props.columns.map((column) => (
                <td key={column.header} data-label={column.header}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A query's three states around its content. */
export function QueryView<T>(props: {
  query: { data: T | undefined; error: unknown; isPending: boolean };
  children: (data: T) => ReactNode;
}) {
  if (props.query.error) return <ErrorMessage error={props.query.error} />;
  if (props.query.isPending || props.query.data === undefined) return <Loading />;
  return <>{props.children(props.query.data)}</>;
}

/** A choice of a select: its value, and what it reads as when that differs (a name for an id). */
export type Option = string | { value: string; label: string };

/** The API's refusal of one field (its message starts with the field's path), shown next to that field. */
const FieldError = createContext<{ name: string; message: string } | undefined>(undefined);

/**
 * The fields a refusal may name, most specific first: `above.input: must be …` names the form's `above.input`,
 * else its `input`; `budgets[0].max_limit` names `max_limit`. A message naming no field names none.
 */
function fieldsOf(error: unknown): string[] {
  const path = /^([A-Za-z_][\w.[\]]*): /.exec((error as Error | undefined)?.message ?? '')?.[1];
  if (!path) return [];
  const whole = path.replace(/\[\d+\]/g, '');
  return [whole, whole.split('.').at(-1)!];
}

export function Field(props: {
  label: string;
  name: string;
  type?: string;
  defaultValue?: string | number | undefined;
  required?: boolean;
  placeholder?: string;
  hint?: string;
  options?: Option[];
  /** Values to pick from while still typing any (a datalist): ids, with their names as labels. */
  suggestions?: Option[];
  /** A text of several lines (an expression, a JSON object): a textarea of this many rows. */
  rows?: number;
  /** What the number counts (`USD / 1M tokens`), shown beside the input and read with its hint. */
  unit?: string;
}) {
  const id = useId();
  const refused = useContext(FieldError);
  const error = refused?.name === props.name ? refused.message : undefined;
  const described = [props.unit && `${id}-unit`, props.hint && `${id}-hint`].filter(Boolean).join(' ');
  const input = (
    <input
      id={id}
      name={props.name}
      type={props.type ?? 'text'}
      defaultValue={props.defaultValue}
      required={props.required}
      placeholder={props.placeholder}
      autoComplete="off"
      step={props.type === 'number' ? 'any' : undefined}
      aria-describedby={described || undefined}
      aria-invalid={error ? true : undefined}
      list={props.suggestions ? `${id}-list` : undefined}
    />
  );
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.options ? (
        <select id={id} name={props.name} defaultValue={props.defaultValue}>
          {props.options.map((option) => {
            const { value, label } = typeof option === 'string' ? { value: option, label: option } : option;
            return (
              <option key={value} value={value}>
                {label || '—'}
              </option>
            );
          })}
        </select>
      ) : props.rows ? (
        <textarea
          id={id}
          name={props.name}
          rows={props.rows}
          defaultValue={props.defaultValue}
          required={props.required}
          placeholder={props.placeholder}
          spellCheck={false}
          aria-describedby={props.hint ? `${id}-hint` : undefined}
          aria-invalid={error ? true : undefined}
        />
      ) : props.unit ? (
        <div className="with-unit">
          {input}
          <span id={`${id}-unit`} className="unit">
            {props.unit}
          </span>
        </div>
      ) : (
        input
      )}
      {props.suggestions && (
        <datalist id={`${id}-list`}>
          {props.suggestions.map((option) => {
            const { value, label } = typeof option === 'string' ? { value: option, label: option } : option;
            return <option key={value} value={value} label={label} />;
          })}
        </datalist>
      )}
      {props.hint && (
        <small id={`${id}-hint`} className="muted">
          {props.hint}
        </small>
      )}
      {error && (
        <small className="error" role="alert" data-testid={`error-${props.name}`}>
          {error}
        </small>
      )}
    </div>
  );
}

/** The one form pattern: fields, a submit button, the API's error under it. */
export function Form(props: {
  label: string;
  submit: string;
  onSubmit: (values: Record<string, string>) => Promise<unknown>;
  children: ReactNode;
  onCancel?: () => void;
  /** The form's field for an API field of another name (`value` → `key_value`). */
  fieldNames?: Record<string, string>;
}) {
  const [error, setError] = useState<{ failure: unknown; field?: string | undefined }>();
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLFormElement>(null);
  const opened = props.onCancel !== undefined;
  // A form that opens (it can be cancelled) takes the focus to its first field; Escape closes it.
  useEffect(() => {
    if (opened)
      ref.current?.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea')?.focus();
  }, [opened]);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const values = Object.fromEntries([...data].map(([name, value]) => [name, String(value)]));
    setBusy(true);
    setError(undefined);
    try {
      await props.onSubmit(values);
    } catch (failure) {
      const field = fieldsOf(failure)
        .map((named) => props.fieldNames?.[named] ?? named)
        .find((name) => form.elements.namedItem(name));
      setError({ failure, field });
    } finally {
      setBusy(false);
    }
  }
  const fieldError = error?.field
    ? { name: error.field, message: (error.failure as Error).message }
    : undefined;
  return (
    <form
      ref={ref}
      className="panel"
      aria-label={props.label}
      onSubmit={submit}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && props.onCancel && !busy) {
          event.preventDefault();
          props.onCancel();
        }
      }}
    >
      <h2>{props.label}</h2>
      <FieldError.Provider value={fieldError}>{props.children}</FieldError.Provider>
      {!fieldError && <ErrorMessage error={error?.failure} />}
      <div className="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : props.submit}
        </button>
        {props.onCancel && (
          <button type="button" className="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** The same pattern with one JSON field: the body as the API takes it (docs name every field). */
export function JsonForm(props: {
  label: string;
  submit: string;
  initial: unknown;
  onSubmit: (body: unknown) => Promise<unknown>;
  onCancel?: () => void;
}) {
  return (
    <Form
      label={props.label}
      submit={props.submit}
      onCancel={props.onCancel}
      onSubmit={async (values) => {
        let body: unknown;
        try {
          body = JSON.parse(values.body ?? '');
        } catch (error) {
          throw new Error(`the body is not JSON: ${(error as Error).message}`);
        }
        await props.onSubmit(body);
      }}
    >
      <JsonArea initial={props.initial} />
    </Form>
  );
}

function JsonArea({ initial }: { initial: unknown }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Body (JSON)</label>
      <textarea
        id={id}
        name="body"
        rows={12}
        spellCheck={false}
        defaultValue={JSON.stringify(initial, null, 2)}
      />
    </div>
  );
}

/**
 * A Copy button that says "Copied" for a moment once the clipboard took the text (or that it could not: an
 * http page other than localhost has no clipboard API).
 */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    const done = (next: 'copied' | 'failed') => {
      setState(next);
      setTimeout(() => setState('idle'), 2_000);
    };
    (navigator.clipboard?.writeText(text) ?? Promise.reject(new Error('no clipboard'))).then(
      () => done('copied'),
      () => done('failed'),
    );
  };
  return (
    <button type="button" className="secondary" onClick={copy} aria-live="polite">
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy it' : label}
    </button>
  );
}

/** A value shown once (a new key or token): copy it now, it is never shown again. */
export function OnceValue({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div className="panel notice" role="status">
      <h2>{label}</h2>
      <p>Copy it now: gw keeps only its hash and will not show it again.</p>
      <code className="once" data-testid="once-value">
        {value}
      </code>
      <div className="actions">
        <CopyButton text={value} />
        <button type="button" className="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      <div className="actions">{children}</div>
    </header>
  );
}

/** A form for the frequent fields, and the whole resource as JSON for everything else. */
export function FormTabs({ label, form, json }: { label: string; form: ReactNode; json: ReactNode }) {
  const [advanced, setAdvanced] = useState(false);
  return (
    <div>
      <div className="tabs" role="tablist" aria-label={label}>
        <button type="button" role="tab" aria-selected={!advanced} onClick={() => setAdvanced(false)}>
          Form
        </button>
        <button type="button" role="tab" aria-selected={advanced} onClick={() => setAdvanced(true)}>
          Advanced (JSON)
        </button>
      </div>
      {advanced ? json : form}
    </div>
  );
}

/** Comma-separated text as a list, empty entries dropped. */
export const listOf = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

/** A health or connection state, coloured by what it means (styles.css `.state-*`). */
export function State({ state }: { state: string }) {
  return <span className={`state state-${state}`}>{state}</span>;
}
