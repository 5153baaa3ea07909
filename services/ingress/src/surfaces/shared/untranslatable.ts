/**
 * What a surface's translation could not carry, by its first member (router-service.ts
 * NativeRequest.untranslatable): a provider of the caller's own format takes the request as it came, any
 * other refuses it with a 400 naming that member rather than serving it without.
 */
export class Untranslatable {
  first: { message: string; param: string } | undefined;

  note(param: string, what: string): void {
    this.first ??= { message: `${param}: ${what} cannot be translated to another format`, param };
  }
}
