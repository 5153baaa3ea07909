import { Link, useParams } from 'react-router';
import { display, formatMs, formatTime, formatTokens, formatUsd } from '../format.ts';
import { PageHeader, QueryView, useApiQuery } from '../ui.tsx';

function Content({ title, text }: { title: string; text: string | null | undefined }) {
  let shown = text ?? '';
  try {
    shown = JSON.stringify(JSON.parse(shown), null, 2);
  } catch {
    // Not JSON (a stream's text): shown as it is.
  }
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {text ? (
        <pre className="content">{shown}</pre>
      ) : (
        <p className="muted">Not kept (logs.content is off, or the key opted out).</p>
      )}
    </section>
  );
}

export default function LogDetail() {
  const { id = '' } = useParams();
  const record = useApiQuery<Record<string, unknown>>(`/api/logs/${encodeURIComponent(id)}`);
  return (
    <>
      <PageHeader title="Request">
        <Link to="/logs">Back to logs</Link>
      </PageHeader>
      <QueryView query={record}>
        {(row) => (
          <>
            <dl className="details">
              {Object.entries(row)
                .filter(([name]) => name !== 'request_content' && name !== 'response_content')
                .map(([name, value]) => (
                  <div key={name}>
                    <dt>{name}</dt>
                    <dd>
                      {name === 'time'
                        ? formatTime(value)
                        : name.endsWith('_ms')
                          ? formatMs(value as number | null)
                          : name.endsWith('_tokens')
                            ? formatTokens(value as number)
                            : name === 'cost'
                              ? formatUsd(value as number)
                              : display(value)}
                    </dd>
                  </div>
                ))}
            </dl>
            <Content title="Request body" text={row.request_content as string | null} />
            <Content title="Response body" text={row.response_content as string | null} />
          </>
        )}
      </QueryView>
    </>
  );
}
