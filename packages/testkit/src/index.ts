export { runStoreContract, type StoreContractOptions } from './store-contract.ts';
export * from './fake-openai.ts';
