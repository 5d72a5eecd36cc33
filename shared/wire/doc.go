// Package wire is Ocypod 0.8's wire format: the router, the JSON reader and
// writer, the query and path decoding, and the exact texts of a refused
// request. httpapi builds the API on it; redisstore writes job objects with
// it (dead letters).
//
// It is written by hand, not on net/http's ServeMux and encoding/json,
// because an Ocypod client sees details those would change:
//
//   - Errors read as serde_json's: "invalid type: integer `30`, expected a
//     duration string at line 1 column 14", "duplicate field `status`",
//     "EOF while parsing an object", with serde's line and column rules.
//     encoding/json words them otherwise and gives byte offsets.
//   - A JSON object key given twice is refused (serde's "duplicate field")
//     where encoding/json keeps the last silently; inside input and output
//     the last is kept, as serde's maps did.
//   - Numbers keep their literal text (123456789012345678901234567890 and
//     1.0e2 are echoed as written), and an integer is told from a float by
//     its literal, as serde's u64 and i64 fields do.
//   - Floats the server writes (stats, backoff factors, rate limits) use
//     serde's shortest round-trip format: 2.0, 0.5, 1e22.
//   - Strings are escaped as serde_json does: only '"', '\\' and control
//     characters, so "<", "&" and U+2028 go out as they are.
//   - Object keys come out in Ocypod's orders: job fields in the order of
//     GET /job/{id} or of ?fields=, user JSON with keys sorted.
//   - Paths are matched as sent, segment by segment: no cleaning of "..",
//     "." or "//", no redirects, no trailing-slash handling, and percent-
//     decoding of wildcard segments only (ServeMux cleans and redirects).
//     405 answers carry Allow with the path's methods in table order.
//   - Path and query decoding follow actix-web and serde_urlencoded:
//     malformed escapes are kept as they are, '+' is a space in a query
//     but not in a path, invalid UTF-8 becomes U+FFFD, and an {id} that is
//     not a u64 is a 404 "can not parse ... to a u64" quoted the Rust way.
package wire
