// Durations in the server's grammar ("30s", "1h 30m", "2days", "1s 500ms")
// and times as RFC 3339 strings.

const UNITS = /** @type {Record<string, number>} */ ({
  nanos: 1e-6, nsec: 1e-6, ns: 1e-6,
  usec: 1e-3, us: 1e-3,
  millis: 1, msec: 1, ms: 1,
  seconds: 1e3, second: 1e3, secs: 1e3, sec: 1e3, s: 1e3,
  minutes: 6e4, minute: 6e4, min: 6e4, mins: 6e4, m: 6e4,
  hours: 3.6e6, hour: 3.6e6, hr: 3.6e6, hrs: 3.6e6, h: 3.6e6,
  days: 8.64e7, day: 8.64e7, d: 8.64e7,
  weeks: 6.048e8, week: 6.048e8, w: 6.048e8,
  months: 2_630_016e3, month: 2_630_016e3, M: 2_630_016e3,
  years: 31_557_600e3, year: 31_557_600e3, y: 31_557_600e3,
});

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
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`ocyless: invalid duration ${String(ms)}: want a finite number of milliseconds >= 0`);
  }
  let rest = Math.round(ms);
  if (rest === 0) return '0s';
  /** @type {string[]} */
  const parts = [];
  const days = Math.floor(rest / 8.64e7);
  rest -= days * 8.64e7;
  if (days) parts.push(`${days}${days > 1 ? 'days' : 'day'}`);
  for (const [unit, size] of /** @type {[string, number][]} */ ([['h', 3.6e6], ['m', 6e4], ['s', 1e3], ['ms', 1]])) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n) parts.push(`${n}${unit}`);
  }
  return parts.join(' ');
}

/**
 * Parses a duration of the server's grammar into milliseconds
 * ("1h 30m" -> 5400000, "14days 10h" -> 1245600000). Units below a
 * millisecond keep their fraction.
 * @param {string} s
 * @returns {number}
 */
export function parseDuration(s) {
  const re = /\s*(\d+)\s*([A-Za-z]*)/y;
  let total = 0;
  let seen = false;
  re.lastIndex = 0;
  while (re.lastIndex < s.length) {
    if (/^\s*$/.test(s.slice(re.lastIndex))) break;
    const m = re.exec(s);
    if (!m) throw new SyntaxError(`ocyless: invalid duration ${JSON.stringify(s)}`);
    const size = UNITS[m[2]];
    if (size === undefined) throw new SyntaxError(`ocyless: invalid duration ${JSON.stringify(s)}: unit ${JSON.stringify(m[2])}`);
    total += Number(m[1]) * size;
    seen = true;
  }
  if (!seen) throw new SyntaxError(`ocyless: invalid duration ${JSON.stringify(s)}`);
  return total;
}

/**
 * @param {DurationInput} d
 * @param {string} field
 * @returns {string}
 */
export function durationValue(d, field) {
  if (typeof d === 'string') return d;
  try {
    return formatDuration(d);
  } catch (err) {
    throw new RangeError(`ocyless: ${field}: ${/** @type {Error} */ (err).message.replace(/^ocyless: /, '')}`);
  }
}

/**
 * A time as the client takes it: a Date, or an RFC 3339 string sent as it is.
 * @typedef {Date | string} TimeInput
 */

/**
 * @param {TimeInput} t
 * @param {string} field
 * @returns {string}
 */
export function timeValue(t, field) {
  if (typeof t === 'string') return t;
  if (!(t instanceof Date) || Number.isNaN(t.getTime())) {
    throw new TypeError(`ocyless: ${field}: want a valid Date or an RFC 3339 string`);
  }
  return t.toISOString();
}
