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

// openapiBody is openapiDoc compacted, made on first use rather than at
// init: every Lambda function links this package, one serves the document.
var openapiBody = sync.OnceValues(func() ([]byte, error) {
	var b bytes.Buffer
	err := json.Compact(&b, openapiDoc)
	return b.Bytes(), err
})

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
