/**
 * The SCIM 2.0 schemas gw serves (RFC 7643): the attributes of a User and a Group, their characteristics (type,
 * case, mutability), and the discovery documents built from them (`/Schemas`, `/ResourceTypes`,
 * `/ServiceProviderConfig`). Filters, PATCH paths and the conversion of bodies all resolve names here, case
 * insensitively, to the canonical spelling.
 */

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterpriseUser: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  searchRequest: 'urn:ietf:params:scim:api:messages:2.0:SearchRequest',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
} as const;

/** The most resources one list answer holds (`count` above it is cut to it). */
export const MAX_RESULTS = 200;

export interface AttributeDefinition {
  name: string;
  type: 'string' | 'boolean' | 'dateTime' | 'reference' | 'complex';
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'always' | 'never' | 'default';
  uniqueness: 'none' | 'server';
  subAttributes?: AttributeDefinition[];
  referenceTypes?: string[];
}

type Characteristics = Partial<Omit<AttributeDefinition, 'name' | 'description'>>;

function attribute(
  name: string,
  description: string,
  characteristics: Characteristics = {},
): AttributeDefinition {
  return {
    name,
    type: 'string',
    multiValued: false,
    description,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...characteristics,
  };
}

const complex = (
  name: string,
  description: string,
  subAttributes: AttributeDefinition[],
  more: Characteristics = {},
) => attribute(name, description, { type: 'complex', subAttributes, ...more });

/** A multi-valued attribute of `value`, `type`, `primary` and `display` (emails, phone numbers…). */
const valued = (name: string, description: string, extra: AttributeDefinition[] = []) =>
  complex(
    name,
    description,
    [
      attribute('value', `The value of one of the ${name}.`),
      attribute('display', 'A human-readable name.'),
      attribute('type', 'A label: work, home, other…'),
      attribute('primary', 'The primary value (at most one is).', { type: 'boolean' }),
      ...extra,
    ],
    { multiValued: true },
  );

/** id, externalId and meta: attributes of every resource (RFC 7643 §3.1), not listed by `/Schemas`. */
const COMMON: AttributeDefinition[] = [
  attribute('id', "gw's identifier of the resource.", {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
  }),
  attribute('externalId', "The provisioning client's identifier of the resource.", { caseExact: true }),
  complex(
    'meta',
    'Resource metadata.',
    [
      attribute('resourceType', 'User or Group.', { caseExact: true, mutability: 'readOnly' }),
      attribute('created', 'When the resource was created.', { type: 'dateTime', mutability: 'readOnly' }),
      attribute('lastModified', 'When the resource last changed.', {
        type: 'dateTime',
        mutability: 'readOnly',
      }),
      attribute('location', 'The URI of the resource.', {
        type: 'reference',
        caseExact: true,
        mutability: 'readOnly',
      }),
      attribute('version', 'The version (ETag) of the resource.', {
        caseExact: true,
        mutability: 'readOnly',
      }),
    ],
    { mutability: 'readOnly' },
  ),
];

const USER_ATTRIBUTES: AttributeDefinition[] = [
  attribute('userName', "The person's sign-in name; gw takes it as their email when it is one.", {
    required: true,
    uniqueness: 'server',
  }),
  complex('name', "The person's name.", [
    attribute('formatted', 'The full name.'),
    attribute('familyName', 'The family name.'),
    attribute('givenName', 'The given name.'),
    attribute('middleName', 'The middle name.'),
    attribute('honorificPrefix', 'Prefix (Ms.).'),
    attribute('honorificSuffix', 'Suffix (III).'),
  ]),
  attribute('displayName', "The name gw shows (the admin user's `name`)."),
  attribute('nickName', 'A casual name.'),
  attribute('profileUrl', 'A profile page.', { type: 'reference', referenceTypes: ['external'] }),
  attribute('title', 'The job title.'),
  attribute('userType', 'Employee, Contractor…'),
  attribute('preferredLanguage', 'Preferred language (en-US).'),
  attribute('locale', 'Locale (en-US).'),
  attribute('timezone', 'Time zone (Europe/Paris).'),
  attribute('active', 'Whether the person may act: false refuses their tokens and sessions at once.', {
    type: 'boolean',
  }),
  attribute('password', 'Never stored by gw (people sign in through the identity provider).', {
    mutability: 'writeOnly',
    returned: 'never',
  }),
  valued('emails', "The person's email addresses; gw's email is the primary one when userName is not one."),
  valued('phoneNumbers', 'Phone numbers.'),
  complex(
    'addresses',
    'Postal addresses.',
    [
      attribute('formatted', 'The full address.'),
      attribute('streetAddress', 'Street.'),
      attribute('locality', 'City.'),
      attribute('region', 'Region.'),
      attribute('postalCode', 'Postal code.'),
      attribute('country', 'Country.'),
      attribute('type', 'work, home, other.'),
      attribute('primary', 'The primary address.', { type: 'boolean' }),
    ],
    { multiValued: true },
  ),
  complex(
    'groups',
    "The groups the person is a member of (read only: change a group's members).",
    [
      attribute('value', 'The group id.', { caseExact: true, mutability: 'readOnly' }),
      attribute('$ref', 'The group URI.', { type: 'reference', caseExact: true, mutability: 'readOnly' }),
      attribute('display', 'The group name.', { mutability: 'readOnly' }),
      attribute('type', 'direct.', { mutability: 'readOnly' }),
    ],
    { multiValued: true, mutability: 'readOnly' },
  ),
  valued('roles', "Roles the client assigns; stored, but gw's roles come from groups (auth.role_mappings)."),
  valued('entitlements', 'Entitlements; stored, not acted on.'),
];

const ENTERPRISE_USER_ATTRIBUTES: AttributeDefinition[] = [
  attribute('employeeNumber', 'Employee number.'),
  attribute('costCenter', 'Cost center.'),
  attribute('organization', 'Organization.'),
  attribute('division', 'Division.'),
  attribute('department', 'Department.'),
  complex('manager', "The person's manager.", [
    attribute('value', "The manager's id.", { caseExact: true }),
    attribute('$ref', "The manager's URI.", { type: 'reference', caseExact: true }),
    attribute('displayName', "The manager's name.", { mutability: 'readOnly' }),
  ]),
];

const GROUP_ATTRIBUTES: AttributeDefinition[] = [
  attribute('displayName', 'The group name: auth.role_mappings rules match it (claim `groups`).', {
    required: true,
    uniqueness: 'server',
  }),
  complex(
    'members',
    'The users of the group (nested groups are not supported).',
    [
      attribute('value', 'The id of a user.', { caseExact: true, mutability: 'immutable' }),
      attribute('$ref', 'The URI of the user.', {
        type: 'reference',
        caseExact: true,
        mutability: 'immutable',
      }),
      attribute('display', 'The name of the user.', { mutability: 'readOnly' }),
      attribute('type', 'User.', { mutability: 'immutable' }),
    ],
    { multiValued: true },
  ),
];

export interface SchemaDefinition {
  id: string;
  name: string;
  description: string;
  attributes: AttributeDefinition[];
}

const USER_SCHEMA: SchemaDefinition = {
  id: SCHEMA.user,
  name: 'User',
  description: 'A person of the admin API (an admin user).',
  attributes: USER_ATTRIBUTES,
};
const ENTERPRISE_USER_SCHEMA: SchemaDefinition = {
  id: SCHEMA.enterpriseUser,
  name: 'EnterpriseUser',
  description: 'Enterprise attributes of a person (stored, not acted on).',
  attributes: ENTERPRISE_USER_ATTRIBUTES,
};
const GROUP_SCHEMA: SchemaDefinition = {
  id: SCHEMA.group,
  name: 'Group',
  description: 'A group of users; its name gives its members roles through auth.role_mappings.',
  attributes: GROUP_ATTRIBUTES,
};

export interface ResourceType {
  id: 'User' | 'Group';
  endpoint: '/Users' | '/Groups';
  schema: SchemaDefinition;
  extensions: SchemaDefinition[];
}

export const USER: ResourceType = {
  id: 'User',
  endpoint: '/Users',
  schema: USER_SCHEMA,
  extensions: [ENTERPRISE_USER_SCHEMA],
};
export const GROUP: ResourceType = { id: 'Group', endpoint: '/Groups', schema: GROUP_SCHEMA, extensions: [] };

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The definition of an attribute among `attributes`, by its name in any case. */
export function findAttribute(
  attributes: readonly AttributeDefinition[] | undefined,
  name: string,
): AttributeDefinition | undefined {
  return attributes?.find((candidate) => sameName(candidate.name, name));
}

/**
 * Where an attribute lives: the core schema (at the top of the resource, with id, externalId and meta) or an
 * extension (under its URN). `urn` is the schema URN a path named, if any; undefined when nothing matches.
 */
export function locateAttribute(
  type: ResourceType,
  name: string,
  urn?: string,
): { extension?: string; definition: AttributeDefinition } | undefined {
  if (urn === undefined || sameName(urn, type.schema.id)) {
    const definition = findAttribute([...COMMON, ...type.schema.attributes], name);
    if (definition) return { definition };
    if (urn !== undefined) return undefined;
  }
  for (const extension of type.extensions) {
    if (urn !== undefined && !sameName(urn, extension.id)) continue;
    const definition = findAttribute(extension.attributes, name);
    if (definition) return { extension: extension.id, definition };
  }
  return undefined;
}

/** The extension schema of that URN (any case), if the resource type has it. */
export function findExtension(type: ResourceType, urn: string): SchemaDefinition | undefined {
  return type.extensions.find((extension) => sameName(extension.id, urn));
}

function schemaDocument(schema: SchemaDefinition, location: string) {
  return {
    schemas: [SCHEMA.schema],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes,
    meta: { resourceType: 'Schema', location: `${location}/Schemas/${schema.id}` },
  };
}

/** `/Schemas`: the core User and Group schemas and the enterprise User extension. */
export function schemaDocuments(location: string) {
  return [USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_USER_SCHEMA].map((schema) =>
    schemaDocument(schema, location),
  );
}

/** `/ResourceTypes`: User and Group. */
export function resourceTypeDocuments(location: string) {
  return [USER, GROUP].map((type) => ({
    schemas: [SCHEMA.resourceType],
    id: type.id,
    name: type.id,
    endpoint: type.endpoint,
    description: type.schema.description,
    schema: type.schema.id,
    schemaExtensions: type.extensions.map((extension) => ({ schema: extension.id, required: false })),
    meta: { resourceType: 'ResourceType', location: `${location}/ResourceTypes/${type.id}` },
  }));
}

/** `/ServiceProviderConfig`: what this service provider supports (docs/scim.md). */
export function serviceProviderConfig(location: string) {
  return {
    schemas: [SCHEMA.serviceProviderConfig],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'GW_SCIM_TOKEN, sent as Authorization: Bearer <token>',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${location}/ServiceProviderConfig` },
  };
}
