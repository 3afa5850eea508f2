// What a push names besides the approval (R-REM-4, R-REM-7): the host and the
// page its link opens. Each is read through one function, so the config keys
// that name them (`host.name`, `web.publicUrl`) are honoured wherever they exist.
import { hostname } from 'node:os';
import type { Config } from '../core/config.js';

/** "The host" in a push: `host.name` from the config, else the OS host name. */
export function hostNameOf(config: Config, osHostname: () => string = hostname): string {
  const configured = (config as { host?: { name?: unknown } }).host?.name;
  return typeof configured === 'string' && configured !== '' ? configured : osHostname();
}

/** The page a push links into: `web.publicUrl`, else the URL the page listens on, else `web.listen` as configured. */
export function pageUrlOf(config: Config, listenUrl: string | undefined): string {
  const publicUrl = (config.web as { publicUrl?: unknown }).publicUrl;
  if (typeof publicUrl === 'string' && publicUrl !== '') return publicUrl;
  return listenUrl ?? `http://${config.web.listen}/`;
}
