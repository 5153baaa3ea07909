import { z } from 'zod';
import { RESTART_REQUIRED, systemSettingsSchema } from './system-settings.ts';

/** The sections of the system settings, as `/api/config` names them. */
const SECTIONS = ['client', 'governance.settings', 'mcp', 'logs', 'cache'] as const;

/**
 * One system setting as the schema declares it: what the console shows beside its field (description, unit,
 * default, bounds, choices) and whether a change applies to the next request or at the next start.
 */
export interface SettingField {
  section: (typeof SECTIONS)[number];
  name: string;
  /** A yes/no, a number, a text, a list of texts, several of fixed choices, or an object (the JSON tab's). */
  kind: 'boolean' | 'number' | 'text' | 'list' | 'choices' | 'object';
  description?: string | undefined;
  unit?: string | undefined;
  default?: unknown;
  minimum?: number | undefined;
  maximum?: number | undefined;
  /** The values a `choices` field picks from. */
  options?: string[] | undefined;
  /** May be left unset. */
  optional: boolean;
  applies: 'live' | 'restart';
}

interface JsonSchema {
  type?: string;
  description?: string;
  unit?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
}

/** Most a JSON number holds: zod's integer bound says nothing to a person. */
const bound = (value: number | undefined) =>
  value === undefined || Math.abs(value) >= Number.MAX_SAFE_INTEGER ? undefined : value;

function kindOf(schema: JsonSchema): SettingField['kind'] {
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'number' || schema.type === 'integer') return 'number';
  if (schema.type === 'string') return 'text';
  if (schema.type === 'array') return schema.items?.enum ? 'choices' : 'list';
  return 'object';
}

function sectionSchema(root: JsonSchema, section: (typeof SECTIONS)[number]): JsonSchema {
  let schema: JsonSchema | undefined = root;
  for (const part of section.split('.')) schema = schema?.properties?.[part];
  return schema ?? {};
}

/** Every system setting, in the schema's order, from its declarations (`.meta`, `restartOnly`). */
function describeSettings(): SettingField[] {
  const root = z.toJSONSchema(systemSettingsSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  // What a stored value always has: the fields required once defaults are applied.
  const output = z.toJSONSchema(systemSettingsSchema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  const restart = new Set(RESTART_REQUIRED);
  return SECTIONS.flatMap((section) => {
    const schema = sectionSchema(root, section);
    const required = new Set(sectionSchema(output, section).required ?? []);
    return Object.entries(schema.properties ?? {}).map(([name, field]) => ({
      section,
      name,
      kind: kindOf(field),
      description: field.description,
      unit: field.unit,
      default: field.default,
      minimum: bound(field.minimum),
      maximum: bound(field.maximum),
      options: field.items?.enum?.map(String),
      optional: !required.has(name),
      applies: restart.has(`${section}.${name}`) ? ('restart' as const) : ('live' as const),
    }));
  });
}

let fields: readonly SettingField[] | undefined;

/** The system settings' fields (`GET /api/config/fields`), computed at the first call (not at every import). */
export function settingFields(): readonly SettingField[] {
  fields ??= describeSettings();
  return fields;
}
