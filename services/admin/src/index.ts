export * from './compose.ts';
export * from './core/access/admin-auth.ts';
export * from './core/admin-app.ts';
