package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// The peer comparison: the same job shape (peerInput), the same counts and
// concurrency, each side in turn on one private redis-server that holds
// nothing else (FLUSHALL before each side), figures read from the server
// itself (INFO) around each phase.

// peerSizes are the sizes of one peer comparison.
type peerSizes struct {
	jobs, workers, rounds int // lifecycles per round, concurrency, rounds (medians)
	memJobs               int // jobs enqueued for the memory figure
}

var (
	benchPeerSizes = peerSizes{jobs: 20000, workers: 50, rounds: 3, memJobs: 100000}
	smokePeerSizes = peerSizes{jobs: 40, workers: 4, rounds: 1, memJobs: 60}
)

// peerInput is every job's input, on both sides.
const peerInput = `{"n":1}`

// peerDir holds the peers' node script and its package.json and
// package-lock.json (the versions measured).
var peerDir = filepath.Join("peers")

// serverSnap is what INFO says at one moment.
type serverSnap struct {
	cpu, cpuChildren time.Duration // used_cpu_user+sys; the same of forked children
	cmds             map[string]cmdStat
	mem, memClients  int64 // used_memory, mem_clients_normal
}

// snapServer reads INFO cpu, commandstats and memory in one command.
func snapServer(ctx context.Context, rdb redis.UniversalClient) (serverSnap, error) {
	text, err := rdb.Info(ctx, "cpu", "commandstats", "memory").Result()
	if err != nil {
		return serverSnap{}, err
	}
	s := serverSnap{}
	if s.cmds, err = parseCommandStats(text); err != nil {
		return serverSnap{}, err
	}
	kv := infoFields(text)
	secs := func(names ...string) (time.Duration, error) {
		var total float64
		for _, n := range names {
			f, err := strconv.ParseFloat(kv[n], 64)
			if err != nil {
				return 0, fmt.Errorf("INFO %s = %q: %w", n, kv[n], err)
			}
			total += f
		}
		return time.Duration(total * float64(time.Second)), nil
	}
	if s.cpu, err = secs("used_cpu_user", "used_cpu_sys"); err != nil {
		return serverSnap{}, err
	}
	if s.cpuChildren, err = secs("used_cpu_user_children", "used_cpu_sys_children"); err != nil {
		return serverSnap{}, err
	}
	for name, dst := range map[string]*int64{"used_memory": &s.mem, "mem_clients_normal": &s.memClients} {
		if *dst, err = strconv.ParseInt(kv[name], 10, 64); err != nil {
			return serverSnap{}, fmt.Errorf("INFO %s = %q: %w", name, kv[name], err)
		}
	}
	return s, nil
}

// infoFields is the key:value lines of an INFO reply.
func infoFields(text string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			kv[k] = v
		}
	}
	return kv
}

// phaseResult is what redis-server did during one phase.
type phaseResult struct {
	wall             time.Duration
	cpu, cpuChildren time.Duration
	cmds             map[string]int64 // calls by command, INFO (ours) left out
	mem, memClients  int64
}

func (p phaseResult) calls() int64 {
	var n int64
	for _, c := range p.cmds {
		n += c
	}
	return n
}

// scripts is the script calls among p's commands.
func (p phaseResult) scripts() int64 {
	var n int64
	for _, name := range []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"} {
		n += p.cmds[name]
	}
	return n
}

func diffSnap(before, after serverSnap, wall time.Duration) phaseResult {
	p := phaseResult{wall: wall, cpu: after.cpu - before.cpu, cpuChildren: after.cpuChildren - before.cpuChildren,
		cmds: map[string]int64{}, mem: after.mem - before.mem, memClients: after.memClients - before.memClients}
	for name, st := range after.cmds {
		if name == "info" {
			continue // the measurement's own
		}
		if n := st.Calls - before.cmds[name].Calls; n != 0 {
			p.cmds[name] = n
		}
	}
	return p
}

func addPhases(ps ...phaseResult) phaseResult {
	t := phaseResult{cmds: map[string]int64{}}
	for _, p := range ps {
		t.wall += p.wall
		t.cpu += p.cpu
		t.cpuChildren += p.cpuChildren
		t.mem += p.mem
		t.memClients += p.memClients
		for k, v := range p.cmds {
			t.cmds[k] += v
		}
	}
	return t
}

// measurePhase runs fn between two INFO readings.
func measurePhase(ctx context.Context, info redis.UniversalClient, fn func() error) (phaseResult, error) {
	before, err := snapServer(ctx, info)
	if err != nil {
		return phaseResult{}, err
	}
	t0 := time.Now()
	if err := fn(); err != nil {
		return phaseResult{}, err
	}
	wall := time.Since(t0)
	after, err := snapServer(ctx, info)
	if err != nil {
		return phaseResult{}, err
	}
	return diffSnap(before, after, wall), nil
}

// ourLifecycles is our side of a lifecycle round: the product's client and
// store with default options (namespace "ocypod"), a warm-up of as many
// lifecycles as workers on a queue of its own, then the phases "enqueue"
// (jobs CreateJob calls, workers at a time) and "process" (workers
// goroutines each taking a job with NextJob and completing it with
// UpdateJob until the queue is empty).
func ourLifecycles(ctx context.Context, srv *redistest.Server, sz peerSizes, memOnly bool, opts redisstore.Options) ([]phaseResult, error) {
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), DialTimeout: benchRedisTimeout, ReadTimeout: benchRedisTimeout, WriteTimeout: benchRedisTimeout})
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	store, err := redisstore.New(rdb, opts)
	if err != nil {
		return nil, err
	}
	for _, q := range []string{"warm", "bench"} {
		if _, err := store.PutQueue(ctx, q, benchQueue); err != nil {
			return nil, err
		}
	}
	if err := parallel(sz.workers, sz.workers, func() error { return lifecycle(ctx, store, "warm") }); err != nil {
		return nil, err
	}
	n := sz.jobs
	if memOnly {
		n = sz.memJobs
	}
	enq, err := measurePhase(ctx, srv.Client(), func() error {
		return parallel(sz.workers, n, func() error {
			_, err := store.CreateJob(ctx, "bench", lifecycleSpec)
			return err
		})
	})
	if err != nil || memOnly {
		return []phaseResult{enq}, err
	}
	var done atomic.Int64
	proc, err := measurePhase(ctx, srv.Client(), func() error {
		// The worker loop the API offers (PATCH /job/{id}?take=): complete
		// a job and take the next in one call, as BullMQ's worker does.
		take := &ocypod.TakeRequest{Queues: []string{"bench"}}
		return parallel(sz.workers, sz.workers, func() error {
			next, err := store.NextJob(ctx, "bench")
			if err != nil || next == nil {
				return err
			}
			for id := next.ID; ; {
				_, jobs, err := store.UpdateJob(ctx, id, completedUpdate, take)
				if err != nil {
					return err
				}
				done.Add(1)
				if len(jobs) == 0 {
					return nil
				}
				id = jobs[0].ID
			}
		})
	})
	if err == nil && done.Load() != int64(n) {
		err = fmt.Errorf("our workers completed %d jobs, want %d", done.Load(), n)
	}
	return []phaseResult{enq, proc}, err
}

// peerInstall copies the peers' files into a cache directory named after
// their content and installs the locked versions there once (never in the
// repository). It returns that directory and the versions installed.
//
// It runs npm install, which follows package-lock.json, rather than npm ci:
// the lock holds only the platform packages the registry here serves
// (msgpackr's optional native parts for linux), and npm ci refuses a lock
// that lacks the other platforms'.
func peerInstall(ctx context.Context) (dir string, versions map[string]string, err error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", nil, errors.New("node not found")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", nil, errors.New("npm not found")
	}
	files := []string{"package.json", "package-lock.json", "peer.mjs"}
	h := sha256.New()
	contents := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(peerDir, f))
		if err != nil {
			return "", nil, err
		}
		contents[f] = b
		if f != "peer.mjs" { // the install depends on the manifests only
			fmt.Fprintf(h, "%s %d\n", f, len(b))
			h.Write(b)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir = filepath.Join(cache, "ocyless-bench", "peers-"+hex.EncodeToString(h.Sum(nil))[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	for f, b := range contents {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", nil, err
		}
	}
	marker := filepath.Join(dir, ".installed")
	if _, err := os.Stat(marker); err != nil {
		cmd := exec.CommandContext(ctx, "npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("npm install in %s: %v\n%s", dir, err, out)
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return "", nil, err
		}
	}
	versions = map[string]string{}
	for pkg, path := range map[string]string{"bullmq": "bullmq", "bee-queue": "bee-queue", "ioredis": "ioredis", "redis": "bee-queue/node_modules/redis"} {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(path), "package.json"))
		if err != nil {
			return "", nil, fmt.Errorf("npm install in %s left no %s: %w", dir, path, err)
		}
		var m struct{ Version string }
		if json.Unmarshal(b, &m) == nil {
			versions[pkg] = m.Version
		}
	}
	return dir, versions, nil
}

// nodePeer runs peer.mjs for peer in mode and measures each of its phases.
func nodePeer(ctx context.Context, dir string, srv *redistest.Server, peer, mode string, jobs, workers int) ([]phaseResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "peer.mjs"), peer, mode, srv.Addr(),
		strconv.Itoa(jobs), strconv.Itoa(workers), peerInput)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fail := func(err error) ([]phaseResult, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("node peer.mjs %s %s: %w\n%s", peer, mode, err, stderr.String())
	}
	lines := bufio.NewScanner(stdout)
	next := func() (string, error) {
		if !lines.Scan() {
			return "", fmt.Errorf("output ended (%v)", lines.Err())
		}
		return lines.Text(), nil
	}
	var phases []phaseResult
	for {
		line, err := next()
		if err != nil {
			return fail(err)
		}
		if line == "end" {
			break
		}
		name, ok := strings.CutPrefix(line, "ready ")
		if !ok {
			return fail(fmt.Errorf("unexpected line %q", line))
		}
		p, err := measurePhase(ctx, srv.Client(), func() error {
			if _, err := io.WriteString(stdin, "go\n"); err != nil {
				return err
			}
			line, err := next()
			if err == nil && line != "done "+name {
				err = fmt.Errorf("unexpected line %q, want done %s", line, name)
			}
			return err
		})
		if err != nil {
			return fail(err)
		}
		phases = append(phases, p)
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("node peer.mjs %s %s: %w\n%s", peer, mode, err, stderr.String())
	}
	return phases, nil
}

// peerFigures are one side's results over the rounds.
type peerFigures struct {
	name                string
	life, mem           []phaseResult   // per round: enqueue+process, enqueue of memJobs
	phases              [][]phaseResult // per round: enqueue, process
	jobs, memJobs       int
	lastCmds            map[string]int64 // the median round's commands, for the breakdown
	cpuChildrenObserved time.Duration
}

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// values is fn of each of ps, in round order.
func values(fn func(p phaseResult) float64, ps []phaseResult) []float64 {
	var xs []float64
	for _, p := range ps {
		xs = append(xs, fn(p))
	}
	return xs
}

func (f *peerFigures) each(fn func(p phaseResult) float64, ps []phaseResult) float64 {
	return medianF(values(fn, ps))
}

// The figures of each round; the methods without "Rounds" are their
// medians.

func (f *peerFigures) cpuRounds() []float64 {
	return values(func(p phaseResult) float64 { return float64(p.cpu.Nanoseconds()) / 1e3 / float64(f.jobs) }, f.life)
}

func (f *peerFigures) cmdsRounds() []float64 {
	return values(func(p phaseResult) float64 { return float64(p.calls()) / float64(f.jobs) }, f.life)
}

func (f *peerFigures) rateRounds() []float64 {
	return values(func(p phaseResult) float64 { return float64(f.jobs) / p.wall.Seconds() }, f.life)
}

func (f *peerFigures) bytesRounds() []float64 {
	return values(func(p phaseResult) float64 { return float64(p.mem) / float64(f.memJobs) }, f.mem)
}

// cpuPerLife is the median redis-server CPU per lifecycle, in µs.
func (f *peerFigures) cpuPerLife() float64 { return medianF(f.cpuRounds()) }

func (f *peerFigures) cmdsPerLife() float64 { return medianF(f.cmdsRounds()) }

func (f *peerFigures) lifePerSec() float64 { return medianF(f.rateRounds()) }

func (f *peerFigures) bytesPerJob() float64 { return medianF(f.bytesRounds()) }

func (f *peerFigures) scriptsPerLife() float64 {
	return f.each(func(p phaseResult) float64 { return float64(p.scripts()) / float64(f.jobs) }, f.life)
}

func (f *peerFigures) clientBytesPerJob() float64 {
	return f.each(func(p phaseResult) float64 { return float64(p.memClients) / float64(f.memJobs) }, f.mem)
}

// phaseCPU is the median CPU per job of phase i (0 enqueue, 1 process), µs.
func (f *peerFigures) phaseCPU(i int) float64 {
	var ps []phaseResult
	for _, r := range f.phases {
		ps = append(ps, r[i])
	}
	return f.each(func(p phaseResult) float64 { return float64(p.cpu.Nanoseconds()) / 1e3 / float64(f.jobs) }, ps)
}

func (f *peerFigures) phaseCmds(i int) float64 {
	var ps []phaseResult
	for _, r := range f.phases {
		ps = append(ps, r[i])
	}
	return f.each(func(p phaseResult) float64 { return float64(p.calls()) / float64(f.jobs) }, ps)
}

// topCommands is cmds per job, largest first, at most k of them.
func topCommands(cmds map[string]int64, jobs, k int) string {
	type kv struct {
		name string
		n    int64
	}
	var list []kv
	for name, n := range cmds {
		list = append(list, kv{name, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].name < list[j].name
	})
	var parts []string
	for i, e := range list {
		if i == k {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", e.name, float64(e.n)/float64(jobs)))
	}
	return strings.Join(parts, ", ")
}
