/**
 * What the gateway and the signer agree on for the sign link (README.md in this folder):
 * where it is opened, what it is called in the `Upgrade` header, and the heads of its frames.
 */
/** The signer's HTTP path that upgrades to the link (internal: the gateway never routes it). */
export const SIGN_LINK_PATH = '/internal/sign-link';
/** The `Upgrade` token; the version changes with any change to the frames or heads. */
export const SIGN_LINK_PROTOCOL = 'pmm-sign-link/1';

/** A request's head: the HTTP path it stands for and the headers the signer reads (names lower-case). */
export interface LinkRequestHead {
  path: string;
  headers: Record<string, string>;
}

/** An answer's head: what the gateway writes to its client before the body. */
export interface LinkAnswerHead {
  status: number;
  headers: Record<string, string>;
}

export interface LinkRequest extends LinkRequestHead {
  body: Buffer;
}

export interface LinkAnswer extends LinkAnswerHead {
  body: Buffer;
}
