package lambdamain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// InitErrorType is the errorType reported for an init failure.
const InitErrorType = "Runtime.InitError"

// ReportInitError posts msg to the Runtime API's init error endpoint
// (http://<api>/2018-06-01/runtime/init/error), as the Lambda custom runtime
// contract asks of a runtime that cannot start. msg must already be
// redacted. A nil client means http.DefaultClient; an empty api (not on
// Lambda) does nothing.
func ReportInitError(ctx context.Context, client *http.Client, api, msg string) error {
	if api == "" {
		return nil
	}
	if client == nil {
		client = http.DefaultClient
	}
	body, err := json.Marshal(struct {
		Message string   `json:"errorMessage"`
		Type    string   `json:"errorType"`
		Trace   []string `json:"stackTrace"`
	}{msg, InitErrorType, []string{}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+api+"/2018-06-01/runtime/init/error", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Lambda-Runtime-Function-Error-Type", InitErrorType)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("runtime API answered %s", resp.Status)
	}
	return nil
}
