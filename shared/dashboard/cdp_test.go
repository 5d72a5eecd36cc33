package dashboard_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A minimal DevTools protocol client. Chromium runs with
// --remote-debugging-pipe: it reads commands from its fd 3 and writes
// answers and events to its fd 4, each message one JSON text ended by a NUL
// byte. A pipe needs no port (nothing to race for, nothing another local
// process could connect to) and no WebSocket code.

// chromiumNames are the executables tried, in order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// callTimeout bounds one protocol command; waitTimeout one wait for the
// page to reach a state.
const (
	callTimeout = 30 * time.Second
	waitTimeout = 30 * time.Second
)

// findChromium returns the browser's path. Without one the test fails
// under CI (CI=true; .ci/run installs it) and is skipped, loudly, elsewhere.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "headless Chromium is not installed (looked for " + strings.Join(chromiumNames, ", ") +
		" on PATH): the dashboard's browser tests cannot run. Install it: apt-get install -y chromium"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED: " + msg)
	return ""
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
}

// browser is one headless Chromium process.
type browser struct {
	cmd  *exec.Cmd
	out  *os.File // our end of its fd 3
	done chan struct{}

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	tabs    map[string]*tab // by session id
	log     strings.Builder // its stderr, for failure messages
}

// startBrowser starts Chromium for t; it is stopped when t ends.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin := findChromium(t)
	cmdR, cmdW, err := os.Pipe() // commands: we write, it reads on fd 3
	if err != nil {
		t.Fatal(err)
	}
	evR, evW, err := os.Pipe() // answers and events: it writes on fd 4
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--headless", "--remote-debugging-pipe", "--user-data-dir="+t.TempDir(),
		// The sandbox guards against hostile sites; these tests load only
		// their own server, and Chromium refuses to start as root with it.
		"--no-sandbox",
		"--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--mute-audio", "--hide-scrollbars", "--password-store=basic",
		"about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, evW}
	cmd.SysProcAttr = procAttr()
	b := &browser{cmd: cmd, out: cmdW, done: make(chan struct{}), pending: map[int64]chan cdpMessage{}, tabs: map[string]*tab{}}
	cmd.Stderr = lockedWriter{&b.mu, &b.log}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	_ = cmdR.Close()
	_ = evW.Close()
	go b.read(evR)
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = b.call(ctx, "", "Browser.close", nil)
		select {
		case <-b.done:
		case <-ctx.Done():
		}
		killGroup(cmd.Process.Pid)
		<-b.done
		_ = cmdW.Close()
	})
	return b
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 1<<20 {
		w.b.Write(p)
	}
	return len(p), nil
}

// read dispatches Chromium's messages: answers to their callers, events to
// their page.
func (b *browser) read(r *os.File) {
	defer r.Close()
	in := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := in.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else if tb := b.tabs[m.SessionID]; tb != nil {
			tb.event(m)
		}
		b.mu.Unlock()
	}
}

// call sends one command (to a page's session, or to the browser when
// session is "") and returns its result.
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	ch := make(chan cdpMessage, 1)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	msg, err := json.Marshal(cdpMessage{ID: id, SessionID: session, Method: method, Params: mustJSON(params)})
	if err == nil {
		b.pending[id] = ch
		_, err = b.out.Write(append(msg, 0))
	}
	b.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s %s", method, m.Error.Message, m.Error.Data)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("%s: chromium exited: %s", method, b.stderrTail())
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (b *browser) stderrTail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.log.String()
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// tab is one browser tab, attached over a flat session.
type tab struct {
	b       *browser
	session string
	loaded  chan struct{} // signalled on each load event

	// Guarded by b.mu.
	problems []string // uncaught exceptions and console errors
}

// page drives a tab for one test: failures are that test's.
type page struct {
	t *testing.T
	*tab
}

// on returns p driven by t, a subtest.
func (p *page) on(t *testing.T) *page { return &page{t: t, tab: p.tab} }

// pageOptions change how a page treats the document it loads.
type pageOptions struct {
	// bypassCSP makes Chromium ignore the page's Content-Security-Policy,
	// so the page's own escaping is all that stands between data and
	// script.
	bypassCSP bool
	// script runs in every document before its own scripts, after the
	// harness (a test's clock, say).
	script string
}

// harness runs in every document before its own scripts (DevTools
// injects it, whatever the policy): it records policy violations.
const harness = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '')));`

// newPage opens a tab of 1280x1000 CSS pixels.
func (b *browser) newPage(t *testing.T, o pageOptions) *page {
	t.Helper()
	ctx := t.Context()
	var target struct{ TargetID string }
	b.must(t, ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	b.must(t, ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	p := &page{t: t, tab: &tab{b: b, session: attached.SessionID, loaded: make(chan struct{}, 16)}}
	b.mu.Lock()
	b.tabs[p.session] = p.tab
	b.mu.Unlock()
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		p.must(m, nil, nil)
	}
	p.must("Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": harness + o.script}, nil)
	p.must("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": false}, nil)
	if o.bypassCSP {
		p.must("Page.setBypassCSP", map[string]any{"enabled": true}, nil)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = b.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target.TargetID})
	})
	return p
}

func (b *browser) must(t *testing.T, ctx context.Context, session, method string, params, out any) {
	t.Helper()
	res, err := b.call(ctx, session, method, params)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
}

func (p *page) must(method string, params, out any) {
	p.t.Helper()
	p.b.must(p.t, p.t.Context(), p.session, method, params, out)
}

// event handles one of the tab's events; called with b.mu held.
func (p *tab) event(m cdpMessage) {
	switch m.Method {
	case "Page.loadEventFired":
		select {
		case p.loaded <- struct{}{}:
		default:
		}
	case "Runtime.exceptionThrown":
		var e struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &e)
		p.problems = append(p.problems, "uncaught exception: "+e.ExceptionDetails.Text+" "+e.ExceptionDetails.Exception.Description)
	case "Log.entryAdded":
		var e struct {
			Entry struct {
				Source, Level, Text, URL string
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &e)
		if e.Entry.Level == "error" {
			p.problems = append(p.problems, "console "+e.Entry.Source+" error: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &e)
		if e.Type == "error" || e.Type == "assert" {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, fmt.Sprint(a.Value, a.Description))
			}
			p.problems = append(p.problems, "console."+e.Type+": "+strings.Join(parts, " "))
		}
	}
}

// takeProblems returns and forgets what went wrong in the tab so far.
func (p *tab) takeProblems() []string {
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	out := p.problems
	p.problems = nil
	return out
}

// navigate loads url and waits for its load event.
func (p *page) navigate(url string) {
	p.t.Helper()
	for len(p.loaded) > 0 {
		<-p.loaded
	}
	var res struct{ ErrorText string }
	p.must("Page.navigate", map[string]any{"url": url}, &res)
	if res.ErrorText != "" {
		p.t.Fatalf("navigate %s: %s", url, res.ErrorText)
	}
	select {
	case <-p.loaded:
	case <-time.After(waitTimeout):
		p.t.Fatalf("navigate %s: no load event within %v", url, waitTimeout)
	}
}

// eval evaluates a JavaScript expression, awaiting a promise, and decodes
// its value into out (when not nil).
func (p *page) eval(expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	raw, err := p.b.call(p.t.Context(), p.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "awaitPromise": true, "returnByValue": true,
	})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	if d := res.ExceptionDetails; d != nil {
		return errors.New(strings.TrimSpace(d.Text + " " + d.Exception.Description))
	}
	if out != nil && len(res.Result.Value) > 0 {
		return json.Unmarshal(res.Result.Value, out)
	}
	return nil
}

func (p *page) mustEval(expr string, out any) {
	p.t.Helper()
	if err := p.eval(expr, out); err != nil {
		p.t.Fatalf("eval %s: %v", expr, err)
	}
}

// wait polls a JavaScript condition inside the page until it holds, and
// fails the test with the page's state when it does not within
// waitTimeout.
func (p *page) wait(cond string) {
	p.t.Helper()
	expr := fmt.Sprintf(`new Promise((resolve, reject) => {
  const end = Date.now() + %d;
  (function poll() {
    let ok = false;
    try { ok = (%s); } catch (e) { ok = false; }
    if (ok) return resolve(true);
    if (Date.now() > end) return reject(new Error('timed out'));
    setTimeout(poll, 10);
  })();
})`, waitTimeout.Milliseconds(), cond)
	if err := p.eval(expr, nil); err != nil {
		var state string
		_ = p.eval(`document.body ? document.body.dataset.state + ' | ' + document.body.innerText.slice(0, 1500) : 'no body'`, &state)
		p.t.Fatalf("waiting for %s: %v\npage: %s", cond, err, state)
	}
}

// text is the innerText of the first element matching selector.
func (p *page) text(selector string) string {
	p.t.Helper()
	var s string
	p.mustEval(fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) throw new Error('no element'); return e.innerText; })()`,
		jsString(selector)), &s)
	return s
}

// click clicks the middle of the first element matching selector with
// the mouse, as a user would.
func (p *page) click(selector string) {
	p.t.Helper()
	var pt struct{ X, Y float64 }
	p.mustEval(fmt.Sprintf(`(() => {
  const e = document.querySelector(%s);
  if (!e) throw new Error('no element matches');
  e.scrollIntoView({block: 'center'});
  const r = e.getBoundingClientRect();
  return {x: r.x + r.width / 2, y: r.y + r.height / 2};
})()`, jsString(selector)), &pt)
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p.must("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": pt.X, "y": pt.Y, "button": "left", "clickCount": 1}, nil)
	}
}

// screenshot saves the viewport as name.png in dir and logs the path.
func (p *page) screenshot(dir, name string) {
	p.t.Helper()
	var shot struct{ Data string }
	p.must("Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", path)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
