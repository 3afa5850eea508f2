// A passkey as the journal stores it (R-REM-6), and how its row maps to it.
// Only public material: the credential id, its COSE public key and counter.

export interface PasskeyRecord {
  /** A short id for people (`assent web passkeys remove ID`). */
  id: string;
  /** The WebAuthn credential id, base64url. */
  credentialId: string;
  /** The COSE-encoded public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter as last seen; 0 for authenticators that keep none. */
  counter: number;
  transports: string[];
  /** The principal of the paired page session that registered it (`web:…`). */
  enrolledBy: string;
  /** The relying-party id (host name of web.publicUrl) it was registered for. */
  rpId: string;
  createdAt: number;
  lastUsedAt?: number;
}

export interface PasskeyRow {
  id: string;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string;
  enrolled_by: string;
  rp_id: string;
  created_at: number;
  last_used_at: number | null;
}

export function rowToPasskey(row: PasskeyRow): PasskeyRecord {
  const record: PasskeyRecord = {
    id: row.id,
    credentialId: row.credential_id,
    publicKey: row.public_key,
    counter: row.counter,
    transports: JSON.parse(row.transports) as string[],
    enrolledBy: row.enrolled_by,
    rpId: row.rp_id,
    createdAt: row.created_at,
  };
  if (row.last_used_at !== null) record.lastUsedAt = row.last_used_at;
  return record;
}
