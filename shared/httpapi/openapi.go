package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"
)

// openapiDoc is the OpenAPI 3.1 description of every route. The tests keep
// it true: its operations are exactly the route table's, it validates
// against the OpenAPI 3.1 schema, and every answer the handlers give in
// them, errors included, has a status it lists and a body its schema
// accepts.
//
//go:embed openapi.json
var openapiDoc []byte

// openapiBody returns openapiDoc compacted, made on first use rather than
// at init: nothing at init refers to the document, so a binary that never
// serves it (every Lambda function but the openapi one) leaves it out.
func openapiBody() ([]byte, error) {
	openapiOnce.Do(func() {
		var b bytes.Buffer
		openapiErr = json.Compact(&b, openapiDoc)
		openapiCompact = b.Bytes()
	})
	return openapiCompact, openapiErr
}

var (
	openapiOnce    sync.Once
	openapiCompact []byte
	openapiErr     error
)

// openapi serves GET /openapi.json: the API's OpenAPI document. It does
// not touch Redis.
func (a *API) openapi(w http.ResponseWriter, _ *http.Request) error {
	body, err := openapiBody()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
