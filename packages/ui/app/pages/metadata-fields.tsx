// Metadata of a virtual key or a budget owner: labels routing rules read (`key.metadata.tier`,
// `team.metadata.region`), edited as key/value rows.
import { Rows, readRows } from '../rows.tsx';

export function MetadataRows({
  current,
  reads,
}: {
  current?: Record<string, string> | undefined;
  reads: string;
}) {
  return (
    <Rows
      name="metadata"
      legend="Metadata"
      add="Add metadata"
      hint={`Labels routing rules read as ${reads}.metadata (tier = gold).`}
      fields={[
        { name: 'key', label: 'Metadata key', placeholder: 'tier' },
        { name: 'value', label: 'Metadata value', placeholder: 'gold' },
      ]}
      initial={Object.entries(current ?? {}).map(([key, value]) => ({ key, value }))}
    />
  );
}

/** The rows as the API's map; a row without a key is left out. */
function metadataOf(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    readRows(values, 'metadata')
      .filter((row) => row.key)
      .map((row) => [row.key ?? '', row.value ?? '']),
  );
}

/** A create's metadata: only when a row is filled in. */
export function metadataBody(values: Record<string, string>): { metadata?: Record<string, string> } {
  const metadata = metadataOf(values);
  return Object.keys(metadata).length ? { metadata } : {};
}

/** An edit's metadata as a merge patch: every row, and null for each entry no longer listed (removing it). */
export function metadataPatch(
  values: Record<string, string>,
  current: Record<string, string> | undefined,
): { metadata: Record<string, string | null> } {
  const metadata = metadataOf(values);
  const removed = Object.keys(current ?? {}).filter((key) => !(key in metadata));
  return { metadata: { ...Object.fromEntries(removed.map((key) => [key, null])), ...metadata } };
}
