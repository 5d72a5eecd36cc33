/**
 * @typedef {object} VerifyOptions
 * @property {number} [tolerance] seconds the signature's time may be from now, either way (default 300)
 * @property {number} [now] the current time in unix seconds (default: the clock's)
 */
/**
 * Signs body with secret at time t (unix seconds), as the server does:
 * the value of an Ocyless-Signature header. For tests of your handler.
 * @param {string | Uint8Array} body the exact bytes of the request body
 * @param {string | Uint8Array} secret
 * @param {number} [t]
 * @returns {string}
 */
export function signPayload(body: string | Uint8Array, secret: string | Uint8Array, t?: number): string;
/**
 * Verifies a push delivery's or callback's signature, and throws a
 * SignatureError when it does not hold: a missing or malformed header, a
 * time outside the tolerance window (a replayed request), or no v1 value
 * that is the HMAC-SHA256 of "<t>.<body>" under secret (compared in
 * constant time). Several v1 values are accepted (any may match), for a
 * secret being rotated. Pass the raw body, before any JSON parsing: a
 * re-serialised body does not verify.
 * @param {string | Uint8Array} body the exact bytes of the request body
 * @param {string | null | undefined | string[]} header the Ocyless-Signature header's value
 * @param {string | Uint8Array} secret the queue's (or callback's) secret
 * @param {VerifyOptions} [opts]
 * @returns {{ timestamp: number }} the signature's time
 */
export function verifySignature(body: string | Uint8Array, header: string | null | undefined | string[], secret: string | Uint8Array, opts?: VerifyOptions): {
    timestamp: number;
};
/**
 * verifySignature as a boolean.
 * @param {string | Uint8Array} body
 * @param {string | null | undefined | string[]} header
 * @param {string | Uint8Array} secret
 * @param {VerifyOptions} [opts]
 * @returns {boolean}
 */
export function isValidSignature(body: string | Uint8Array, header: string | null | undefined | string[], secret: string | Uint8Array, opts?: VerifyOptions): boolean;
/** The header that carries the signature (lower case, as Node shows headers). */
export const SIGNATURE_HEADER: "ocyless-signature";
/** The default tolerance between the signature's time and now, in seconds. */
export const DEFAULT_TOLERANCE: 300;
/** Why a signature was refused. */
export class SignatureError extends Error {
    /** @param {string} message */
    constructor(message: string);
}
export type VerifyOptions = {
    /**
     * seconds the signature's time may be from now, either way (default 300)
     */
    tolerance?: number | undefined;
    /**
     * the current time in unix seconds (default: the clock's)
     */
    now?: number | undefined;
};
