// Where a proof token may live outside the daemon (R-J-7): a new 0600 file made
// by `--export-proof`, or stdin / a file read by `--approval-proof[-file]`.
// Never argv, never the environment, never printed.
import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { AssentError } from '../../core/base/errors.js';
import { isProofShaped } from '../../core/approval/proof.js';

/**
 * Creates the export file before anything is decided: O_EXCL so an existing
 * path (or a planted symlink) is refused, mode 0600 from the first byte.
 * Returns the open descriptor the proof is written to later.
 */
export function createProofFile(path: string): number {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new AssentError('conflict', `--export-proof ${path}: the file already exists; nothing was approved. Choose a new path (a proof file is never overwritten)`, {
        details: { path },
      });
    }
    throw new AssentError('invalid_params', `--export-proof ${path}: cannot create the file (${code ?? 'error'}); nothing was approved. Check the directory exists and is writable`, {
      details: { path },
    });
  }
}

/** Writes the token and closes the descriptor; the file holds the token and a newline, nothing else. */
export function writeProofFile(fd: number, proof: string): void {
  try {
    writeSync(fd, `${proof}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Reads a proof from `-` (stdin) or a file; the message on failure never echoes the content. */
export function readProof(source: { stdin: true } | { file: string }): string {
  let text: string;
  const label = 'stdin' in source ? '--approval-proof -' : `--approval-proof-file ${source.file}`;
  try {
    if ('stdin' in source) {
      text = readFileSync(0, 'utf8');
    } else {
      const fd = openSync(source.file, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        if (fstatSync(fd).size > 4096) throw new AssentError('invalid_input', `${label}: the file is larger than a proof; point at the file written by --export-proof`);
        text = readFileSync(fd, 'utf8');
      } finally {
        closeSync(fd);
      }
    }
  } catch (error) {
    if (error instanceof AssentError) throw error;
    throw new AssentError('invalid_input', `${label}: cannot read the proof (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path`);
  }
  const proof = text.trim();
  if (!isProofShaped(proof)) {
    throw new AssentError('invalid_input', `${label}: the content is not an assent proof (expected asp1_ and 43 base64url characters); use the file written by \`assent approve ID --export-proof FILE\``);
  }
  return proof;
}
