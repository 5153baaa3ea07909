import { describe, expect, it } from 'vitest';
import {
  readVertexKeySettings,
  VERTEX_DEFAULT_BASE_URL,
  vertexBaseUrl,
  vertexModelPath,
} from './vertex-config.ts';

const account = {
  client_email: 'sa@p.iam.gserviceaccount.com',
  private_key: 'PEM',
  project_id: 'sa-project',
};
const key = (value: string, config: Record<string, unknown> = {}) => ({ id: 'k', value, config });

describe('readVertexKeySettings', () => {
  it("reads the key's value as the service account and defaults the region", () => {
    const settings = readVertexKeySettings(
      'vertex',
      key(JSON.stringify(account), { project_id: 'my-project' }),
      {},
    );
    expect(settings).toMatchObject({
      projectId: 'my-project',
      region: 'us-central1',
      serviceAccount: account,
    });
  });

  it("falls back to the service account's project", () => {
    expect(readVertexKeySettings('vertex', key(JSON.stringify(account)), {}).projectId).toBe('sa-project');
  });

  it('prefers auth_credentials, reading env.NAME from the environment', () => {
    const settings = readVertexKeySettings(
      'vertex',
      key('ignored', { auth_credentials: 'env.VERTEX_SA', region: 'europe-west4' }),
      { VERTEX_SA: JSON.stringify({ ...account, client_email: 'env@p.iam.gserviceaccount.com' }) },
    );
    expect(settings.serviceAccount.client_email).toBe('env@p.iam.gserviceaccount.com');
    expect(settings.region).toBe('europe-west4');
  });

  it.each([
    [key('not json'), /service-account JSON/],
    [key(JSON.stringify({ client_email: 'x' })), /service account private_key/],
    [key(JSON.stringify({ ...account, project_id: undefined })), /project_id is required/],
    [key(JSON.stringify(account), { region: 'us-central1.evil.com/' }), /key config region/],
    [key('', { auth_credentials: 'env.VERTEX_UNSET' }), /service-account JSON/],
  ])('rejects a misconfigured key (%#) without echoing its secret', (badKey, message) => {
    let failure: unknown;
    try {
      readVertexKeySettings('vertex', badKey, {});
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({
      type: 'provider_not_configured',
      message: expect.stringMatching(message),
    });
    expect((failure as Error).message).not.toContain('PEM');
  });
});

describe('vertexBaseUrl', () => {
  it("sends calls to the key's region while the base URL is the default", () => {
    expect(vertexBaseUrl(VERTEX_DEFAULT_BASE_URL, 'us-east5')).toBe(
      'https://us-east5-aiplatform.googleapis.com',
    );
    expect(vertexBaseUrl(`${VERTEX_DEFAULT_BASE_URL}/`, 'europe-west1')).toBe(
      'https://europe-west1-aiplatform.googleapis.com',
    );
    expect(vertexBaseUrl(VERTEX_DEFAULT_BASE_URL, 'global')).toBe('https://aiplatform.googleapis.com');
  });

  it('keeps an explicit base URL', () => {
    expect(vertexBaseUrl('http://127.0.0.1:8080', 'us-east5')).toBe('http://127.0.0.1:8080');
  });
});

describe('vertexModelPath', () => {
  it('keeps a model name inside its path segment', () => {
    const settings = { projectId: 'p', region: 'r' };
    expect(vertexModelPath(settings, 'anthropic', 'claude-opus-4-1@20250805')).toBe(
      '/v1/projects/p/locations/r/publishers/anthropic/models/claude-opus-4-1@20250805',
    );
    expect(vertexModelPath(settings, 'google', '../../other/models/x')).toBe(
      '/v1/projects/p/locations/r/publishers/google/models/..%2F..%2Fother%2Fmodels%2Fx',
    );
  });
});
