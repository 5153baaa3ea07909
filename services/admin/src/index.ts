export * from './compose.ts';
export * from './core/admin-app.ts';
export * from './core/admin-auth.ts';
