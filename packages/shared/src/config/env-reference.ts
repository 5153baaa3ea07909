/** `env.NAME` in a config value reads the environment variable NAME (DESIGN.md §5). */
const ENV_REFERENCE = /^env\.([A-Za-z_][A-Za-z0-9_]*)$/;

export function envReferenceName(value: string): string | undefined {
  return ENV_REFERENCE.exec(value)?.[1];
}

/**
 * The secret a config value stands for; undefined when it names an unset variable. `env` is the environment
 * the process's main handed over: nothing below main reads process.env.
 */
export function resolveSecret(value: string, env: NodeJS.ProcessEnv): string | undefined {
  const name = envReferenceName(value);
  return name === undefined ? value : env[name];
}
