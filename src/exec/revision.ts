// The private revision binding of the two action files (R-TTY-2, R-TTY-7): a
// keyed hash of the exact bytes that were evaluated, plus each file's identity,
// so a change — even one restored before the answer — is seen on re-read.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AssentError } from '../core/base/errors.js';
import type { RandomBytes } from '../core/base/ids.js';
import { readLimitedFile, sameIdentity, UNREADABLE } from './readLimitedFile.js';
import type { LimitedFile } from './readLimitedFile.js';
import type { ExecFileLabel } from '../core/exec/execFiles.js';

export type ReadActionFile = (path: string, file: ExecFileLabel) => Promise<LimitedFile>;

export interface CapturedFiles {
  policy: LimitedFile;
  request: LimitedFile;
}

export type RevisionCheck = 'unchanged' | 'changed' | 'unavailable';

/**
 * Holds a per-run random key, so the fingerprint means nothing outside this
 * process and is never written anywhere.
 */
export class RevisionKeeper {
  private readonly key: Uint8Array;
  private fingerprint: Buffer | undefined;
  private captured: CapturedFiles | undefined;

  constructor(
    private readonly paths: { policy: string; request: string },
    private readonly read: ReadActionFile = readLimitedFile,
    random: RandomBytes = randomBytes,
  ) {
    this.key = random(32);
  }

  private mac(files: CapturedFiles): Buffer {
    const hmac = createHmac('sha256', this.key);
    for (const bytes of [files.policy.bytes, files.request.bytes]) {
      const length = Buffer.alloc(8);
      length.writeBigUInt64BE(BigInt(bytes.byteLength));
      hmac.update(length).update(bytes);
    }
    return hmac.digest();
  }

  /** Reads both files once; these exact bytes are the ones evaluated and shown. */
  async capture(): Promise<CapturedFiles> {
    const policy = await this.read(this.paths.policy, 'policy');
    const request = await this.read(this.paths.request, 'request');
    this.captured = { policy, request };
    this.fingerprint = this.mac(this.captured);
    return this.captured;
  }

  /** Re-reads both files and compares bytes (keyed hash) and identity with the capture. */
  async verify(): Promise<RevisionCheck> {
    if (!this.captured || !this.fingerprint) return 'unavailable';
    let now: CapturedFiles;
    try {
      now = { policy: await this.read(this.paths.policy, 'policy'), request: await this.read(this.paths.request, 'request') };
    } catch (error) {
      if (error instanceof AssentError && error.details?.['reason'] === UNREADABLE) return 'unavailable';
      return 'changed';
    }
    const sameBytes = timingSafeEqual(this.mac(now), this.fingerprint);
    const sameFiles =
      sameIdentity(now.policy.identity, this.captured.policy.identity) &&
      sameIdentity(now.request.identity, this.captured.request.identity);
    return sameBytes && sameFiles ? 'unchanged' : 'changed';
  }
}
