export * from './core/ingress-app.ts';
export * from './core/parse-request.ts';
export * from './core/virtual-key-header.ts';
