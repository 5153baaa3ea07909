export * from './fake-openai.ts';
export * from './gateway-launcher.ts';
export * from './provider-contract.ts';
export { runStoreContract, type StoreContractOptions } from './store-contract.ts';
