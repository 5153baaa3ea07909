import { GatewayError } from '@gw/shared';
import { SCHEMA } from './scim-schema.ts';

/** The `scimType` values of RFC 7644 §3.12 that gw answers. */
export type ScimType =
  | 'invalidFilter'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'invalidValue'
  | 'noTarget'
  | 'mutability'
  | 'uniqueness'
  | 'tooMany';

/** An error SCIM clients read: its HTTP status, its `scimType` (400 and 409) and a detail naming the problem. */
export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;

  constructor(status: number, detail: string, scimType?: ScimType) {
    super(detail);
    this.name = 'ScimError';
    this.status = status;
    this.scimType = scimType;
  }
}

export const invalidFilter = (detail: string) => new ScimError(400, `filter: ${detail}`, 'invalidFilter');
export const invalidPath = (detail: string) => new ScimError(400, detail, 'invalidPath');
export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError(400, detail, 'invalidSyntax');
export const noTarget = (detail: string) => new ScimError(400, detail, 'noTarget');
export const mutability = (detail: string) => new ScimError(400, detail, 'mutability');
export const uniqueness = (detail: string) => new ScimError(409, detail, 'uniqueness');
export const scimNotFound = (detail: string) => new ScimError(404, detail);

/** Any thrown value as a ScimError: gw's own errors keep their status, anything else is a 500. */
export function toScimError(thrown: unknown): ScimError {
  if (thrown instanceof ScimError) return thrown;
  if (thrown instanceof GatewayError) {
    const scimType =
      thrown.status === 400 ? 'invalidSyntax' : thrown.status === 409 ? 'uniqueness' : undefined;
    return new ScimError(thrown.status, thrown.message, scimType);
  }
  return new ScimError(500, 'the SCIM request failed inside gw (logged with its request id)');
}

/** The body of an error answer (RFC 7644 §3.12): `status` is a string. */
export function scimErrorBody(error: ScimError) {
  return {
    schemas: [SCHEMA.error],
    status: String(error.status),
    ...(error.scimType !== undefined && { scimType: error.scimType }),
    detail: error.message,
  };
}
