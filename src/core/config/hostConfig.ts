// The `host` section of config.json (SPEC §20, R-TEAM-3): the label of this
// state directory's host, shown beside its random hostId and used in the
// principal of local decisions (`<os user>@<host name>`).
import { z } from 'zod';

/** A host label: letters, digits, `.`, `_` and `-`, so a principal `<user>@<host>` reads one way only. */
export const HOST_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const HOST_NAME_ALLOWED = 'a host name of 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. "build-01")';

export const HostSchema = z.object(
  {
    /** Default: the operating system's host name, filled in where the OS is known (journal/hostIdentity.ts). */
    name: z.string({ error: HOST_NAME_ALLOWED }).regex(HOST_NAME_PATTERN, { error: HOST_NAME_ALLOWED }).optional(),
  },
  { error: 'an object with "name"' },
);
export type HostConfig = z.infer<typeof HostSchema>;

/** The principal of decisions made on a host's socket (CLI, watch) and of the agent sessions it runs. */
export function localPrincipal(osUser: string, hostName: string): string {
  return `${osUser}@${hostName}`;
}
