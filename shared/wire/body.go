package wire

import (
	"io"
	"mime"
	"net/http"
	"strings"
)

// ReadJSON reads and parses the JSON body of r with the checks of Ocypod's
// JSON extractor, in its order: the content type, the declared length, the
// length actually read, then the JSON itself. limit is the body limit in
// bytes.
func ReadJSON(r *http.Request, limit int64) (*Doc, error) {
	if !IsJSONContentType(r.Header.Get("Content-Type")) {
		return nil, ContentTypeError()
	}
	if r.ContentLength > limit {
		return nil, TooLarge(r.ContentLength, limit)
	}
	src, err := readBody(r, limit)
	if err != nil {
		return nil, err
	}
	return ParseDoc(src)
}

// ReadOptionalJSON is ReadJSON for a route whose body may be left out: an
// empty body, with or without a content type, gives a nil Doc.
func ReadOptionalJSON(r *http.Request, limit int64) (*Doc, error) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > 0 {
		return ReadJSON(r, limit)
	}
	src, err := readBody(r, limit)
	if err != nil || len(src) == 0 {
		return nil, err
	}
	// A body was sent after all: the usual checks, in the usual order.
	if !IsJSONContentType(r.Header.Get("Content-Type")) {
		return nil, ContentTypeError()
	}
	return ParseDoc(src)
}

func readBody(r *http.Request, limit int64) ([]byte, error) {
	body := r.Body
	if body == nil { // a hand-made request; servers always set one
		body = http.NoBody
	}
	var src []byte
	if n := r.ContentLength; n >= 0 && n <= limit {
		// The length is known: read into a buffer of that size at once.
		src = make([]byte, 0, n+1)
	}
	src, err := readAll(&io.LimitedReader{R: body, N: limit + 1}, src)
	if err != nil {
		return nil, ReadError(err)
	}
	if int64(len(src)) > limit {
		return nil, TooLargeStream(limit)
	}
	return src, nil
}

// readAll is io.ReadAll into buf's spare capacity (growing it if need
// be); rd is concrete, so that it stays on the stack.
func readAll(rd *io.LimitedReader, buf []byte) ([]byte, error) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, 512)
	}
	for {
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// IsJSONContentType accepts, as Ocypod does, a media type whose subtype is
// json or ends in +json, with any parameters: application/json,
// text/json; charset=utf-8, application/problem+json.
func IsJSONContentType(ct string) bool {
	if ct == "application/json" { // the usual case, without parsing
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && typ != "" && (sub == "json" || strings.HasSuffix(sub, "+json"))
}
