import { describe, expect, it } from 'vitest';
import { settingFields } from './settings-fields.ts';

const SETTING_FIELDS = settingFields();

const field = (section: string, name: string) =>
  SETTING_FIELDS.find((entry) => entry.section === section && entry.name === name);

describe('the system settings as the console shows them', () => {
  it('declares a description of every setting: a new one without it fails here', () => {
    const undescribed = SETTING_FIELDS.filter((entry) => !entry.description).map(
      (entry) => `${entry.section}.${entry.name}`,
    );
    expect(undescribed).toEqual([]);
    expect(SETTING_FIELDS.length).toBeGreaterThan(30);
  });

  it('reads kind, unit, default, bounds and whether a change applies live or at the next start', () => {
    expect(field('client', 'max_fallbacks')).toMatchObject({
      kind: 'number',
      unit: 'targets',
      default: 5,
      minimum: 0,
      maximum: 100,
      optional: false,
      applies: 'live',
    });
    expect(field('mcp', 'tool_timeout_ms')).toMatchObject({ kind: 'number', unit: 'ms', applies: 'restart' });
    expect(field('governance.settings', 'sweep_interval_ms')).toMatchObject({ applies: 'restart' });
    expect(field('cache', 'types')).toMatchObject({ kind: 'choices', options: ['exact', 'semantic'] });
    expect(field('client', 'public_url')).toMatchObject({ kind: 'text', optional: true });
    expect(field('client', 'required_headers')).toMatchObject({ kind: 'list', default: [], optional: false });
    expect(field('client', 'cors_allowed_origins')).toMatchObject({ kind: 'list', optional: false });
    expect(field('cache', 'embedding')).toMatchObject({ kind: 'object', optional: true });
    // Integer bounds zod adds on its own say nothing to a person.
    expect(field('logs', 'content_max_bytes')).toMatchObject({ minimum: 0, maximum: 1_048_576 });
    expect(field('governance.settings', 'settle_deadline_ms')?.maximum).toBeUndefined();
  });
});
