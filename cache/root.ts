/**
 * Where caches live. Apart from cache.ts so that what needs only the folder (svc init's helper link) does
 * not load SQLite and the git object code.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** `$SVC_CACHE_DIR`, else `$XDG_CACHE_HOME/svc`, else `~/.cache/svc`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SVC_CACHE_DIR) return env.SVC_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "svc");
  return join(homedir(), ".cache", "svc");
}
