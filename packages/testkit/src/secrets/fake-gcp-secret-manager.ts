import { startFakeUpstream } from '../fake-upstream.ts';
import type { FakeSecretManager } from './fake-secret-manager.ts';

/**
 * Google Secret Manager's REST API on loopback: `GET /v1/projects/<p>/secrets/<s>/versions/<v>:access`
 * answering `{name, payload:{data:<base64>}}`, for a bearer token the test hands gw (`accessToken`).
 */
export async function startFakeGcpSecretManager(options: { project?: string } = {}) {
  const project = options.project ?? 'gw-project';
  const accessToken = `ya29.fake-${Math.random().toString(36).slice(2)}`;
  const secrets = new Map<string, string[]>();
  let broken: number | undefined;
  let readCount = 0;
  const googleError = (code: number, status: string, message: string) => ({
    status: code,
    json: { error: { code, message, status } },
  });

  const fake = await startFakeUpstream([
    {
      method: 'GET',
      path: /^\/v1\/projects\/[^/]+\/secrets\/[^/]+\/versions\/[^/:]+:access$/,
      answer: (request) => {
        readCount++;
        if (request.headers.authorization !== `Bearer ${accessToken}`) {
          return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
        }
        if (broken !== undefined)
          return googleError(broken, 'UNAVAILABLE', 'The service is currently unavailable.');
        const [, , , name = '', , version = ''] = (request.path.split('?')[0] ?? '')
          .slice(4, -':access'.length)
          .split('/');
        const versions = secrets.get(name);
        const number = version === 'latest' ? versions?.length : Number(version);
        const text = number ? versions?.[number - 1] : undefined;
        if (!text || !number) {
          return googleError(
            404,
            'NOT_FOUND',
            `Secret [projects/${project}/secrets/${name}] not found or has no versions.`,
          );
        }
        return {
          json: {
            name: `projects/${project}/secrets/${name}/versions/${number}`,
            payload: { data: Buffer.from(text).toString('base64'), dataCrc32c: '0' },
          },
        };
      },
    },
  ]);

  return {
    url: fake.url,
    accessToken,
    reference: (name: string, field?: string) =>
      `gcp-sm.projects/${project}/secrets/${name}${field ? `#${field}` : ''}`,
    put(name: string, fields: Record<string, string>) {
      secrets.set(name, [...(secrets.get(name) ?? []), JSON.stringify(fields)]);
    },
    breakReads(status: number) {
      broken = status;
    },
    heal() {
      broken = undefined;
    },
    reads: () => readCount,
    vaultConfig: { gcp_secret_manager: { endpoint: fake.url } },
    close: fake.close,
  } satisfies FakeSecretManager & Record<string, unknown>;
}
