package ocypod

import "regexp"

// userinfo matches the credentials part of a URL such as
// redis://user:secret@host:6379 or rediss://:token@host.
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@`)

// presigned matches the query of a presigned AWS URL (an ElastiCache IAM
// token), whose signature is a credential.
var presigned = regexp.MustCompile(`(X-Amz-[A-Za-z-]+=)[^&\s"]*`)

// RedactSecrets removes credentials from s: URL user information and the
// values of X-Amz-* query parameters. Every error text that may reach a log or
// a client goes through it.
func RedactSecrets(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}REDACTED@")
	return presigned.ReplaceAllString(s, "${1}REDACTED")
}
