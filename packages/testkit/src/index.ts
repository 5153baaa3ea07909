export * from './fake-openai.ts';
export { runStoreContract, type StoreContractOptions } from './store-contract.ts';
