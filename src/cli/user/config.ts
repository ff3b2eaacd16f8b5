import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What `pdfedit login` stores. */
export interface UserConfig {
  api_key?: string;
  base_url?: string;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** The user's config folder: $XDG_CONFIG_HOME/pdfedit, ~/.config/pdfedit, or %APPDATA%\pdfedit. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'pdfedit');
  if (process.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'pdfedit');
  return path.join(env.HOME || os.homedir(), '.config', 'pdfedit');
}

export function configFile(env: NodeJS.ProcessEnv): string {
  return path.join(configDir(env), 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv): UserConfig {
  try {
    const parsed = JSON.parse(readFileSync(configFile(env), 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as UserConfig) : {};
  } catch {
    return {};
  }
}

/** Writes the config readable by the user only (folder 0700, file 0600, also when it existed). */
export function writeConfig(env: NodeJS.ProcessEnv, config: UserConfig): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = configFile(env);
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** The key and base URL in force: PDFEDIT_API_KEY / PDFEDIT_BASE_URL over the stored config. */
export function resolveAccess(env: NodeJS.ProcessEnv): { key: string | undefined; baseUrl: string } {
  const stored = readConfig(env);
  return {
    key: env.PDFEDIT_API_KEY || stored.api_key,
    baseUrl: (env.PDFEDIT_BASE_URL || stored.base_url || DEFAULT_BASE_URL).replace(/\/+$/, ''),
  };
}
