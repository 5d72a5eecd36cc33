/**
 * A duration as the client takes it: milliseconds (a number), or a string
 * in the server's grammar, sent as it is ("90s", "1h 30m").
 * @typedef {number | string} DurationInput
 */
/**
 * Formats milliseconds in the server's duration grammar, as the server
 * itself writes durations: 5400000 -> "1h 30m", 1500 -> "1s 500ms",
 * 0 -> "0s". Negative or non-finite values are refused: the server has
 * none, and "0s" would disable a timeout instead.
 * @param {number} ms
 * @returns {string}
 */
export function formatDuration(ms: number): string;
/**
 * Parses a duration of the server's grammar into milliseconds
 * ("1h 30m" -> 5400000, "14days 10h" -> 1245600000). Units below a
 * millisecond keep their fraction.
 * @param {string} s
 * @returns {number}
 */
export function parseDuration(s: string): number;
/**
 * @param {DurationInput} d
 * @param {string} field
 * @returns {string}
 */
export function durationValue(d: DurationInput, field: string): string;
/**
 * A time as the client takes it: a Date, or an RFC 3339 string sent as it is.
 * @typedef {Date | string} TimeInput
 */
/**
 * @param {TimeInput} t
 * @param {string} field
 * @returns {string}
 */
export function timeValue(t: TimeInput, field: string): string;
/**
 * A duration as the client takes it: milliseconds (a number), or a string
 * in the server's grammar, sent as it is ("90s", "1h 30m").
 */
export type DurationInput = number | string;
/**
 * A time as the client takes it: a Date, or an RFC 3339 string sent as it is.
 */
export type TimeInput = Date | string;
