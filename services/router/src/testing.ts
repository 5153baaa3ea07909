// `@gw/router/testing`: the provider contract suite, the provider fakes and the wire fixtures, for the router's
// own tests and the end-to-end suites. Nothing in production imports it.
export * from './testing/fakes/fake-bedrock.ts';
export * from './testing/fakes/fake-google-token-endpoint.ts';
export * from './testing/provider-contract/index.ts';
