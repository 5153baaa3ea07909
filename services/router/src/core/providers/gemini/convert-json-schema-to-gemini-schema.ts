/** The members of Google's OpenAPI-subset Schema object; Gemini rejects any other (`additionalProperties`, `$schema`…). */
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'default',
  'minimum',
  'maximum',
  'required',
  'propertyOrdering',
]);

type JsonSchema = Record<string, unknown>;

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON Schema (as OpenAI tools and `response_format` carry it) as the Schema object of Gemini's
 * `functionDeclarations[].parameters` and `generationConfig.responseSchema`: unknown members dropped,
 * `type: [T, 'null']` as `nullable`, `const` as a one-value `enum`.
 */
export function convertJsonSchemaToGeminiSchema(schema: unknown): JsonSchema | undefined {
  if (!isSchema(schema)) return undefined;
  const converted: JsonSchema = {};
  for (const [field, value] of Object.entries(schema)) {
    if (SCHEMA_FIELDS.has(field)) converted[field] = value;
  }
  if (Array.isArray(schema['type'])) {
    const types = (schema['type'] as unknown[]).filter((type) => type !== 'null');
    converted['type'] = types[0];
    if (types.length < (schema['type'] as unknown[]).length) converted['nullable'] = true;
  }
  if (schema['const'] !== undefined) converted['enum'] = [schema['const']];
  if (isSchema(schema['properties'])) {
    converted['properties'] = Object.fromEntries(
      Object.entries(schema['properties']).map(([name, value]) => [
        name,
        convertJsonSchemaToGeminiSchema(value) ?? {},
      ]),
    );
  }
  if (isSchema(schema['items'])) converted['items'] = convertJsonSchemaToGeminiSchema(schema['items']);
  const variants = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(variants)) {
    converted['anyOf'] = variants.map((variant) => convertJsonSchemaToGeminiSchema(variant) ?? {});
  }
  return converted;
}
