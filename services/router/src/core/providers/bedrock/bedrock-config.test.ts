import { describe, expect, it } from 'vitest';
import {
  BEDROCK_DEFAULT_BASE_URL,
  bedrockBaseUrl,
  bedrockModelPath,
  readBedrockKeySettings,
} from './bedrock-config.ts';

const key = (config: Record<string, unknown>, value = '') => ({ id: 'k1', value, config });

describe('readBedrockKeySettings', () => {
  it('takes the region from the key, else from AWS_REGION, else AWS_DEFAULT_REGION', () => {
    expect(
      readBedrockKeySettings('bedrock', key({ region: 'eu-west-3' }), { AWS_REGION: 'us-east-2' }).region,
    ).toBe('eu-west-3');
    expect(readBedrockKeySettings('bedrock', key({}), { AWS_REGION: 'us-east-2' }).region).toBe('us-east-2');
    expect(readBedrockKeySettings('bedrock', key({}), { AWS_DEFAULT_REGION: 'ap-south-1' }).region).toBe(
      'ap-south-1',
    );
  });

  it('names what is missing or wrong', () => {
    expect(() => readBedrockKeySettings('bedrock', key({}), {})).toThrow(/region is required/);
    expect(() => readBedrockKeySettings('bedrock', key({ region: 'evil.com/x' }), {})).toThrow(/region/);
    expect(() =>
      readBedrockKeySettings('bedrock', key({ region: 'us-east-1', access_key: 'AKIA' }), {}),
    ).toThrow(/both access_key and secret_key/);
    expect(() =>
      readBedrockKeySettings('bedrock', key({ region: 'us-east-1', auth: 'api_key' }), {}),
    ).toThrow(/API key as the key's value/);
    expect(() => readBedrockKeySettings('bedrock', key({ region: 'us-east-1', auth: 'iam' }), {})).toThrow(
      /auth/,
    );
  });

  it('reads env.NAME references of credentials and leaves the chain to keys without any', () => {
    const settings = readBedrockKeySettings(
      'bedrock',
      key({
        region: 'us-east-1',
        access_key: 'env.MY_ID',
        secret_key: 'env.MY_SECRET',
        session_token: 'tok',
      }),
      { MY_ID: 'AKIAX', MY_SECRET: 'shh' },
    );
    expect(settings.credentials).toEqual({
      accessKeyId: 'AKIAX',
      secretAccessKey: 'shh',
      sessionToken: 'tok',
    });
    expect(readBedrockKeySettings('bedrock', key({ region: 'us-east-1' }), {}).credentials).toBeUndefined();
  });
});

describe('bedrockBaseUrl', () => {
  it("goes to the key's region while the base URL is the registry default", () => {
    expect(bedrockBaseUrl(BEDROCK_DEFAULT_BASE_URL, 'eu-central-1')).toBe(
      'https://bedrock-runtime.eu-central-1.amazonaws.com',
    );
    expect(bedrockBaseUrl(`${BEDROCK_DEFAULT_BASE_URL}/`, 'us-east-1')).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com',
    );
  });

  it('keeps a configured base URL (VPC endpoint, test server)', () => {
    const vpc = 'https://vpce-0abc-bedrock-runtime.us-west-2.vpce.amazonaws.com';
    expect(bedrockBaseUrl(vpc, 'eu-central-1')).toBe(vpc);
  });
});

describe('bedrockModelPath', () => {
  it('encodes the model id as one path segment', () => {
    expect(bedrockModelPath('meta.llama3-70b-instruct-v1:0', 'converse')).toBe(
      '/model/meta.llama3-70b-instruct-v1%3A0/converse',
    );
    expect(bedrockModelPath('arn:aws:bedrock:us-east-1:1:inference-profile/us.x', 'converse-stream')).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x/converse-stream',
    );
  });
});
