// The certificate the HTTP head serves when it speaks TLS itself (R-REM-2):
// the operator's own files (`web.tls: {cert, key}`), or a self-signed one that
// assent makes once — an ECDSA P-256 key (0600) and a certificate naming the
// addresses it listens on — keeps in the state directory and reuses on every
// start while it still covers those addresses and has not expired.
import { webcrypto, createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { AssentError, errorText } from '../../core/base/errors.js';
import type { WebTls } from '../../core/config/webConfig.js';
import { writeFileNew } from '../../state/statePaths.js';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** `sha256:` + lowercase hex of the certificate's DER (R-REM-7). */
  fingerprint: string;
  /** Where it came from, for the log. */
  source: 'files' | 'self-signed (reused)' | 'self-signed (new)';
}

export interface TlsOptions {
  /** The state directory; a self-signed pair lives there. */
  stateDir: string;
  /** Host names and IP addresses the certificate must name (the listen host, or every address of a wildcard listen). */
  hosts: readonly string[];
  now?: () => number;
}

/** Lifetime of a self-signed certificate: 825 days, the longest some phones accept. */
const SELF_SIGNED_DAYS = 825;
/** A certificate this close to its end is replaced at start. */
const RENEW_BEFORE_MS = 7 * 86_400_000;

export function selfSignedPaths(stateDir: string): { cert: string; key: string } {
  return { cert: join(stateDir, 'web-tls.crt'), key: join(stateDir, 'web-tls.key') };
}

/** `sha256:` + lowercase hex of a certificate's DER. */
export function certificateFingerprint(der: Uint8Array): string {
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

function readPem(path: string, key: 'cert' | 'key'): string {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (cause) {
    throw new AssentError('config_invalid', `web.tls.${key}: cannot read ${path} (${(cause as NodeJS.ErrnoException).code ?? errorText(cause)}); fix the path in config.json or use "self-signed"`, {
      cause,
      details: { path, key: `web.tls.${key}` },
    });
  }
}

/** Parses and pairs a certificate with its key; the error names the key path that is wrong. */
function checkPair(certPem: string, keyPem: string, where: { cert: string; key: string }): X509Certificate {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (cause) {
    throw new AssentError('config_invalid', `web.tls.cert: ${where.cert} is not a PEM certificate (${errorText(cause)})`, { cause, details: { path: where.cert } });
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(keyPem);
  } catch (cause) {
    throw new AssentError('config_invalid', `web.tls.key: ${where.key} is not a PEM private key (${errorText(cause)})`, { cause, details: { path: where.key } });
  }
  if (!cert.checkPrivateKey(key)) {
    throw new AssentError('config_invalid', `web.tls.key: ${where.key} is not the private key of the certificate ${where.cert}; give the matching pair`, {
      details: { cert: where.cert, key: where.key },
    });
  }
  return cert;
}

/** Whether a certificate names every host (IP addresses as IP SANs, names as DNS SANs). */
function covers(cert: X509Certificate, hosts: readonly string[]): boolean {
  const names = (cert.subjectAltName ?? '').split(/,\s*/);
  return hosts.every((host) => {
    const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
    if (isIP(bare) === 0) return names.includes(`DNS:${bare}`);
    // node prints IPv6 SANs expanded and in upper case; compare both forms case-insensitively.
    return names.some((name) => name.toLowerCase() === `ip address:${bare}` || (isIP(bare) === 6 && name.startsWith('IP Address:') && sameIpv6(name.slice(11), bare)));
  });
}

function sameIpv6(a: string, b: string): boolean {
  const expand = (text: string): string => {
    const [head = '', tail = ''] = text.toLowerCase().split('::');
    const left = head === '' ? [] : head.split(':');
    const right = tail === '' ? [] : tail.split(':');
    const fill = text.includes('::') ? Array<string>(8 - left.length - right.length).fill('0') : [];
    return [...left, ...fill, ...right].map((part) => part.replace(/^0+(?=.)/, '')).join(':');
  };
  return expand(a) === expand(b);
}

function toPem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** Replaces a state file atomically with a new 0600 file (O_EXCL on a temporary name, then rename). */
function writePrivateFile(target: string, text: string): void {
  const temporary = `${target}.${process.pid}.tmp`;
  fs.rmSync(temporary, { force: true });
  writeFileNew(temporary, text);
  fs.renameSync(temporary, target);
}

async function generateSelfSigned(hosts: readonly string[], now: number): Promise<{ cert: string; key: string }> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'];
  const names = [...new Set(hosts.map((host) => host.replace(/^\[|\]$/g, '').toLowerCase()))].map((host) => ({
    type: isIP(host) === 0 ? ('dns' as const) : ('ip' as const),
    value: host,
  }));
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
    name: [{ CN: [`assent on ${hostname()}`] }],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + SELF_SIGNED_DAYS * 86_400_000),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey);
  return { cert: cert.toString('pem'), key: toPem('PRIVATE KEY', pkcs8) };
}

/**
 * The self-signed pair in the state directory, made when missing, unreadable,
 * not covering `hosts` or near its end; otherwise the same certificate (and so
 * the same fingerprint) as last time.
 */
async function selfSigned(options: TlsOptions): Promise<TlsMaterial> {
  const paths = selfSignedPaths(options.stateDir);
  const now = options.now?.() ?? Date.now();
  if (fs.existsSync(paths.cert) && fs.existsSync(paths.key)) {
    const mode = fs.statSync(paths.key).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new AssentError('state_insecure', `${paths.key} is readable by other users (mode ${mode.toString(8)}); run chmod 600 ${paths.key}, or delete it so assent makes a new certificate`, {
        details: { path: paths.key, mode },
      });
    }
    try {
      const certPem = fs.readFileSync(paths.cert, 'utf8');
      const keyPem = fs.readFileSync(paths.key, 'utf8');
      const cert = checkPair(certPem, keyPem, paths);
      if (Date.parse(cert.validTo) - RENEW_BEFORE_MS > now && covers(cert, options.hosts)) {
        return { cert: certPem, key: keyPem, fingerprint: certificateFingerprint(cert.raw), source: 'self-signed (reused)' };
      }
    } catch {
      // Unreadable or not a pair: replaced below.
    }
  }
  const made = await generateSelfSigned(options.hosts, now);
  // The key first: a certificate on disk without its key would be replaced again at the next start anyway.
  writePrivateFile(paths.key, made.key);
  writePrivateFile(paths.cert, made.cert);
  return { ...made, fingerprint: certificateFingerprint(new X509Certificate(made.cert).raw), source: 'self-signed (new)' };
}

/** The key and certificate `web.tls` asks for, with the certificate's fingerprint. */
export async function loadTlsMaterial(tls: WebTls, options: TlsOptions): Promise<TlsMaterial> {
  if (tls === 'self-signed') return selfSigned(options);
  const certPem = readPem(tls.cert, 'cert');
  const keyPem = readPem(tls.key, 'key');
  const cert = checkPair(certPem, keyPem, tls);
  return { cert: certPem, key: keyPem, fingerprint: certificateFingerprint(cert.raw), source: 'files' };
}
