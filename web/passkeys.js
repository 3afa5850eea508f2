// Passkeys on the approval page (R-REM-6): "Add a passkey" (a code the
// terminal confirms with `assent web passkeys add`, then a WebAuthn
// registration with user verification), and approving an approval that needs
// a passkey with an assertion over the challenge the daemon made for it. The
// daemon checks everything; this file only carries bytes between it and the
// browser's authenticator. Text from the daemon is set with textContent only.
/* global document, window, navigator, fetch, PublicKeyCredential */

function $(id) {
  return document.getElementById(id);
}

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'text') node.textContent = value;
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

class PasskeyError extends Error {
  constructor(status, body) {
    super(body && typeof body.message === 'string' ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

async function post(name, params = {}) {
  const response = await fetch(`/api/v1/${name}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(params),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new PasskeyError(response.status, body);
  return body;
}

/** base64url text → ArrayBuffer, and back. */
function fromB64(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = window.atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function toB64(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return window.btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function descriptors(list) {
  return (list ?? []).map((item) => ({ ...item, id: fromB64(item.id) }));
}

function requireWebAuthn() {
  if (typeof PublicKeyCredential === 'undefined' || navigator.credentials === undefined) {
    throw new Error('This browser offers no passkeys here: WebAuthn needs the page at its https name (web.publicUrl) with a certificate the device trusts.');
  }
}

/** What a refusal of the browser itself means to a person. */
function browserRefusal(failure) {
  if (failure && failure.name === 'NotAllowedError') {
    return new Error('The authenticator did not confirm (cancelled, timed out, or it could not verify you); nothing was decided.');
  }
  if (failure && failure.name === 'SecurityError') {
    return new Error('The browser refused passkeys for this address: open the page at its https name (web.publicUrl), not by IP address.');
  }
  if (failure && failure.name === 'InvalidStateError') return new Error('This authenticator holds a passkey for assent already.');
  return failure;
}

/** The "needs your passkey" line of a card. */
export function passkeyNote(approval) {
  if (approval.presence !== 'passkey') return '';
  return el('p', { class: 'note presence', text: 'Needs your passkey: only an enrolled passkey approves this action; the terminal and other channels can only deny it.' });
}

/**
 * Approves one approval with a passkey: the daemon's challenge binds this
 * approval, its exact action and a one-time nonce; the authenticator signs it
 * after checking you (user verification required); the daemon verifies it.
 */
export async function approveWithPasskey(id) {
  requireWebAuthn();
  const { nonce, options } = await post('passkeys.challenge', { id });
  let credential;
  try {
    credential = await navigator.credentials.get({
      publicKey: { ...options, challenge: fromB64(options.challenge), allowCredentials: descriptors(options.allowCredentials) },
    });
  } catch (failure) {
    throw browserRefusal(failure);
  }
  if (credential === null) throw new Error('No passkey was chosen; nothing was decided.');
  const response = {
    id: credential.id,
    rawId: toB64(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: toB64(credential.response.clientDataJSON),
      authenticatorData: toB64(credential.response.authenticatorData),
      signature: toB64(credential.response.signature),
      ...(credential.response.userHandle ? { userHandle: toB64(credential.response.userHandle) } : {}),
    },
    clientExtensionResults: credential.getClientExtensionResults(),
  };
  return post('passkeys.approve', { id, nonce, response });
}

async function register() {
  requireWebAuthn();
  const options = await post('passkeys.registrationOptions');
  let credential;
  try {
    credential = await navigator.credentials.create({
      publicKey: {
        ...options,
        challenge: fromB64(options.challenge),
        user: { ...options.user, id: fromB64(options.user.id) },
        excludeCredentials: descriptors(options.excludeCredentials),
      },
    });
  } catch (failure) {
    throw browserRefusal(failure);
  }
  if (credential === null) throw new Error('No passkey was created.');
  const transports = typeof credential.response.getTransports === 'function' ? credential.response.getTransports() : [];
  return post('passkeys.register', {
    response: {
      id: credential.id,
      rawId: toB64(credential.rawId),
      type: credential.type,
      response: { clientDataJSON: toB64(credential.response.clientDataJSON), attestationObject: toB64(credential.response.attestationObject), transports },
      clientExtensionResults: credential.getClientExtensionResults(),
    },
  });
}

/** The "Passkeys" section at the end of the signed-in page. */
function mount() {
  const app = $('app');
  if (app === null || $('passkeys') !== null) return;
  const status = el('p', { id: 'passkey-status', role: 'status', 'aria-live': 'polite' });
  const code = el('p', { id: 'passkey-code', class: 'code', hidden: '' });
  const add = el('button', { type: 'button', id: 'passkey-add', text: 'Add a passkey' });
  const finish = el('button', { type: 'button', id: 'passkey-register', class: 'approve', text: 'Register passkey', hidden: '' });
  const say = (text, isError = false) => {
    status.textContent = text;
    status.className = isError ? 'error' : '';
  };
  add.addEventListener('click', async () => {
    add.disabled = true;
    try {
      const enrolment = await post('passkeys.enrol');
      code.textContent = enrolment.code;
      code.hidden = false;
      finish.hidden = false;
      say('Run `assent web passkeys add` in your terminal and type this code there, then press Register passkey.');
    } catch (failure) {
      say(failure.message, true);
    } finally {
      add.disabled = false;
    }
  });
  finish.addEventListener('click', async () => {
    finish.disabled = true;
    try {
      const passkey = await register();
      code.hidden = true;
      finish.hidden = true;
      say(`Passkey ${passkey.id} added: it can now approve actions that need a passkey.`);
    } catch (failure) {
      say(failure.message, true);
    } finally {
      finish.disabled = false;
    }
  });
  app.append(
    el('section', { id: 'passkeys', 'aria-label': 'Passkeys' }, [
      el('h2', { text: 'Passkeys' }),
      el('p', { class: 'note', text: 'Actions your policy marks as needing a passkey are approved only here, with a passkey enrolled from a paired page and confirmed at your terminal.' }),
      el('div', { class: 'actions' }, [add, finish]),
      code,
      status,
    ]),
  );
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mount);
else mount();
