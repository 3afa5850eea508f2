// The page a push links into (R-REM-4): `web.publicUrl` when a TLS proxy serves
// the page under a public name, else the URL the page listens on.
import type { Config } from '../core/config/config.js';

/** The page a push links into: `web.publicUrl`, else the URL the page listens on, else `web.listen` as configured. */
export function pageUrlOf(config: Pick<Config, 'web'>, listenUrl: string | undefined): string {
  if (config.web.publicUrl !== undefined) return config.web.publicUrl;
  return listenUrl ?? `http://${config.web.listen}/`;
}
